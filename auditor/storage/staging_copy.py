"""Rows into the staging table: the one part of a staged import that differs by database.

PostgreSQL takes a binary COPY (psycopg's row writer is in C: 1M staged rows in 0.44-0.56 s
against 0.66-1.18 s for CSV written by pyarrow from the same lists, measured side by side);
SQLite an ``executemany`` into its temporary table (no index, no trigger, and no lock on the
database: see ``auditor.storage.staging``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

# The staging table's columns: the file's line, the names as given (ids resolved later),
# the category already as its id, labeled_at in microseconds.
COLUMNS = [
    ("seq", "BIGINT"),  # the row's position in the staging: lines may repeat (API batches)
    ("line", "BIGINT"),
    ("item", "TEXT"),
    ("rater", "TEXT"),
    ("session", "TEXT"),
    ("category_id", "INTEGER"),
    ("labeled_at", "BIGINT"),
    ("rater_kind", "TEXT"),
    ("client_key", "TEXT"),
]
_BINARY_TYPES = {"seq": "int8", "line": "int8", "category_id": "int4", "labeled_at": "int8"}


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

    def present(self) -> list[str]:
        """The columns given (binding absent ones row by row as NULL costs 2-3x)."""
        return [name for name, _ in COLUMNS[1:] if getattr(self, name) is not None]

    def rows(self, names: list[str], first_seq: int) -> Any:
        seq = range(first_seq, first_seq + len(self.line))
        return zip(seq, *(getattr(self, name) for name in names), strict=True)


def copy_rows(connection: Connection, columns: StagedColumns, first_seq: int) -> None:
    """Append ``columns`` to the staging table inside the connection's transaction, the
    rows numbered (``seq``) from ``first_seq``, and the batch's distinct item and rater names
    to their own tables (``NAME_TABLES``)."""
    names = columns.present()
    _append(connection, "import_staging", ["seq", *names], columns.rows(names, first_seq))
    _append(connection, "import_items", ["item"], ((item,) for item in set(columns.item)))
    kinds = columns.rater_kind or [None] * len(columns.rater)
    raters = set(zip(columns.rater, kinds, strict=True))
    _append(connection, "import_raters", ["rater", "rater_kind"], raters)


# Each batch's distinct names (a name may come again in a later batch): the pass that creates
# the new items and raters reads these instead of every staged row (10M rows of 1M items
# and 10 raters: 10M names less to hash twice).
NAME_TABLES = {
    "import_items": "item TEXT",
    "import_raters": "rater TEXT, rater_kind TEXT",
}


def _append(connection: Connection, table: str, names: list[str], rows: Iterable[Any]) -> None:
    listed = ", ".join(names)
    if connection.dialect.name == "postgresql":
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        statement = f"COPY {table} ({listed}) FROM STDIN (FORMAT BINARY)"
        with cursor, cursor.copy(statement) as copy:
            copy.set_types([_BINARY_TYPES.get(name, "text") for name in names])
            for row in rows:
                copy.write_row(row)
        return
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        marks = ", ".join("?" * len(names))
        cursor.executemany(f"INSERT INTO {table} ({listed}) VALUES ({marks})", rows)
    finally:
        cursor.close()
