"""Rows into the staging table: the one part of a staged import that differs by database.

PostgreSQL takes a binary COPY; SQLite an ``executemany`` into its temporary table (no
index, no trigger, and no lock on the database: see ``auditor.storage.staging``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from sqlalchemy.engine import Connection

# The staging table's columns: the file's line, the names as given (ids resolved later),
# the category already as its id, labeled_at in microseconds.
COLUMNS = [
    ("line", "BIGINT"),
    ("item", "TEXT"),
    ("rater", "TEXT"),
    ("session", "TEXT"),
    ("category_id", "INTEGER"),
    ("labeled_at", "BIGINT"),
    ("rater_kind", "TEXT"),
    ("client_key", "TEXT"),
]
_BINARY_TYPES = ["int8", "text", "text", "text", "int4", "int8", "text", "text"]


@dataclass(frozen=True)
class StagedColumns:
    """One batch's rows to stage, column by column; an absent optional column is None.
    ``identified``: some row gives labeled_at and no key (its natural identity counts)."""

    line: Sequence[int]
    item: Sequence[str]
    rater: Sequence[str]
    session: Sequence[str | None] | None
    category_id: Sequence[int]
    labeled_at: Sequence[int | None] | None
    rater_kind: Sequence[str | None] | None
    client_key: Sequence[str | None] | None
    identified: bool

    def rows(self) -> Any:
        columns = [getattr(self, name) for name, _ in COLUMNS]
        return zip(*(repeat(None) if c is None else c for c in columns))  # noqa: B905


def copy_rows(connection: Connection, columns: StagedColumns) -> None:
    """Append ``columns`` to the staging table inside the connection's transaction."""
    if connection.dialect.name == "postgresql":
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        with cursor, cursor.copy("COPY import_staging FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_BINARY_TYPES)
            for row in columns.rows():
                copy.write_row(row)
        return
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.executemany("INSERT INTO import_staging VALUES (?, ?, ?, ?, ?, ?, ?, ?)", columns.rows())
    finally:
        cursor.close()
