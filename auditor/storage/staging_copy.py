"""Rows into the staging table: the one part of a staged import that differs by database.

PostgreSQL takes a COPY of CSV written by pyarrow (C on both sides; measured faster than a
binary COPY fed row by row from Python); SQLite an ``executemany`` into its temporary table
(no index, no trigger, and no lock on the database: see ``auditor.storage.staging``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
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
_ARROW_TYPES = {"line": pa.int64(), "category_id": pa.int32(), "labeled_at": pa.int64()}


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


def _csv_bytes(columns: StagedColumns, names: list[str], first_seq: int) -> bytes:
    """The columns as CSV, written by pyarrow in C (PostgreSQL parses CSV in C too: no
    Python call per row on either side). A NULL is an empty unquoted field; no staged text
    is empty (ids are validated non-empty), so NULL and text never meet."""
    arrays = {"seq": pa.array(np.arange(first_seq, first_seq + len(columns.line)))}
    for name in names:
        values = getattr(columns, name)
        kind = _ARROW_TYPES.get(name, pa.string())
        arrays[name] = values if isinstance(values, pa.Array) else pa.array(values, type=kind)
    sink = pa.BufferOutputStream()
    pa_csv.write_csv(
        pa.table(arrays),
        sink,
        write_options=pa_csv.WriteOptions(include_header=False, quoting_style="needed"),
    )
    return bytes(sink.getvalue().to_pybytes())


def copy_rows(connection: Connection, columns: StagedColumns, first_seq: int) -> None:
    """Append ``columns`` to the staging table inside the connection's transaction, the
    rows numbered (``seq``) from ``first_seq``."""
    names = columns.present()
    listed = ", ".join(["seq", *names])
    if connection.dialect.name == "postgresql":
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        statement = f"COPY import_staging ({listed}) FROM STDIN (FORMAT csv)"
        with cursor, cursor.copy(statement) as copy:
            copy.write(_csv_bytes(columns, names, first_seq))
        return
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        marks = ", ".join("?" * (len(names) + 1))
        statement = f"INSERT INTO import_staging ({listed}) VALUES ({marks})"
        cursor.executemany(statement, columns.rows(names, first_seq))
    finally:
        cursor.close()
