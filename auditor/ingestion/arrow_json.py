"""JSON Lines read by pyarrow's streaming JSON reader, in C, as columns (``ColumnBatch``es).

As for CSV (``arrow_csv``), the Python reader (``readers.py``) stays the reference: this one
gives the same rows, values and line numbers, and where it could not, the Python reader reads
the file (or its rest). ``prescan`` sends to Python before anything is read a file with a BOM,
a lone carriage return, bytes that are not UTF-8, a line of blanks or a line longer than
``MAX_LINE_BYTES``; pyarrow itself refuses (``ArrowInvalid``) a line that is not a JSON object,
a repeated key and a field changing type, and ``arrow_json_batches`` refuses
(``NotColumnar``) a field whose values are not all text or integers. Any of these makes the
Python reader read from the first line not yet given, with its own messages.

Line numbers: pyarrow skips empty lines (found by the prescan); the n-th record is the n-th
line that is not empty. A field's value is read as text; integers in an id field are cast
to text as Python's ``str`` writes them; JSON null and a missing key are both null, as
both are None for the Python reader.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from auditor.ingestion.arrow_csv import PRESCAN_CHUNK, ColumnBatch, Prescan
from auditor.ingestion.batch import FIELDS, REQUIRED_FIELDS, RawBatch

# Bytes pyarrow parses at once: it must hold the longest line (prescan: MAX_LINE_BYTES, 1 MiB);
# blocks of 4 MiB parse 2x faster than blocks of 24 MiB (they stay in cache).
BLOCK_SIZE = 4 << 20
_BLANK_BYTES = np.array([ord(c) for c in " \t\f\v"], dtype=np.uint8)


class NotColumnar(Exception):
    """A value the column reader does not read as the Python reader does."""


def prescan(binary: BinaryIO, max_line_bytes: int) -> Prescan | None:
    """Empty lines (1-based) and the number of other lines, or None: Python reads this file."""
    blank: list[np.ndarray] = []
    line_offset = 0
    last = b""
    binary.seek(0)
    while chunk := binary.read(PRESCAN_CHUNK):
        if not chunk.endswith(b"\n"):
            chunk += binary.readline()
        if line_offset == 0 and chunk.startswith(b"\xef\xbb\xbf"):
            return None
        if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
            return None
        try:
            if not chunk.isascii():
                chunk.decode("utf-8")
        except UnicodeDecodeError:
            return None
        data = np.frombuffer(chunk, dtype=np.uint8)
        ends = np.flatnonzero(data == 10)
        starts = np.concatenate(([0], ends + 1))
        stops = np.concatenate((ends, [len(data)]))
        if len(stops) and int((stops - starts).max()) > max_line_bytes - 1:
            return None  # refused by the Python reader, naming the line
        # A line of blanks (not empty) is skipped by both readers, but not found below.
        indented = starts[
            (starts < len(data)) & np.isin(data[np.minimum(starts, len(data) - 1)], _BLANK_BYTES)
        ]
        for start in indented.tolist():
            end = chunk.find(b"\n", start)
            if not (chunk[start:] if end < 0 else chunk[start:end]).strip():
                return None
        length = ends - starts[:-1]
        is_blank = (length == 0) | ((length == 1) & (data[np.maximum(ends - 1, 0)] == 13))
        blank.append(np.flatnonzero(is_blank) + line_offset + 1)
        line_offset += len(ends)
        last = chunk
    binary.seek(0)
    found = np.concatenate(blank).astype(np.int64) if blank else np.empty(0, dtype=np.int64)
    lines = line_offset + (0 if last.endswith(b"\n") or not last else 1)
    return Prescan(blank_lines=found, has_rows=lines - len(found) > 0)


class JsonColumnBatch(ColumnBatch):
    """A ``ColumnBatch`` whose table holds text (or null) columns, one per field."""

    def raw(self) -> RawBatch:
        if self._raw is None:
            present = self.table.column_names
            columns: dict[str, Any] = {
                name: self.table.column(name).to_pylist() if name in present else None
                for name in FIELDS
            }
            self._raw = RawBatch(rows=self.lines.tolist(), errors=self.errors, **columns)
        return self._raw


def field_columns(mapping: dict[str, str]) -> dict[str, str] | None:
    """The file's key of each field, or None when the mapping makes a field's own name the
    key of another field (the Python reader resolves that key by key)."""
    taken = {column for name, column in mapping.items() if column != name}
    if taken & set(FIELDS):
        return None
    return {name: mapping.get(name, name) for name in FIELDS}


ID_FIELDS = {"item", "rater", "label", "session", "key"}  # an integer is read as its text


def _text(name: str, array: pa.Array | None, n: int) -> pa.Array:
    if array is None:
        return pa.nulls(n, pa.string())
    if pa.types.is_string(array.type):
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(n, pa.string())
    if pa.types.is_int64(array.type) and name in ID_FIELDS:
        return array.cast(pa.string())
    raise NotColumnar(f"values of type {array.type}")


def arrow_json_batches(
    binary: BinaryIO,
    columns: dict[str, str],
    batch_size: int,
    scan: Prescan,
    ignored: dict[str, None],
    strict: bool,
) -> Iterator[JsonColumnBatch]:
    """Batches of at most ``batch_size`` records; keys that feed no field are added to
    ``ignored`` (in order of first sight, as the Python reader lists them). With ``strict``
    such a key is ``NotColumnar``: the Python reader names its lines."""
    if not scan.has_rows:
        return
    wanted = set(columns.values())
    schema = pa.schema([(columns["labeled_at"], pa.string())])  # else pyarrow reads a time
    reader = pa_json.open_json(
        binary,
        read_options=pa_json.ReadOptions(use_threads=False, block_size=BLOCK_SIZE),
        parse_options=pa_json.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="infer"
        ),
    )
    gaps = scan.blank_lines - np.arange(len(scan.blank_lines)) - 1
    done = 0  # records given so far
    pending: list[pa.Table] = []  # blocks read, not yet given
    for record_batch in reader:
        n = len(record_batch)
        names = record_batch.schema.names
        unknown = [name for name in names if name not in wanted]
        if unknown and strict:
            raise NotColumnar("unknown fields")
        texts = {
            name: _text(name, record_batch.column(column) if column in names else None, n)
            for name, column in columns.items()
        }
        # An optional field no record gives reads as a field absent from the file (as a CSV
        # without the column): nothing to check, no list of None to make.
        pending.append(
            pa.table(
                {
                    name: text
                    for name, text in texts.items()
                    if name in REQUIRED_FIELDS or text.null_count < n
                }
            )
        )
        ignored.update(dict.fromkeys(unknown))
        if sum(len(table) for table in pending) >= batch_size:
            table = pa.concat_tables(pending, promote_options="default")
            whole = len(table) - len(table) % batch_size
            yield from _batches(table.slice(0, whole), done, batch_size, gaps)
            done += whole
            pending = [table.slice(whole)] if whole < len(table) else []
    if pending:
        yield from _batches(
            pa.concat_tables(pending, promote_options="default"), done, batch_size, gaps
        )


def _batches(
    table: pa.Table, done: int, batch_size: int, gaps: np.ndarray
) -> Iterator[JsonColumnBatch]:
    """``table``'s records (the first is record ``done`` of the file) in batches, with their
    lines: the n-th record is on the n-th line that is not empty."""
    positions = np.arange(done, done + len(table), dtype=np.int64)
    lines = positions + 1 + np.searchsorted(gaps, positions, side="right")
    for start in range(0, len(table), batch_size):
        batch = table.slice(start, batch_size).combine_chunks()
        yield JsonColumnBatch(batch, lines[start : start + batch_size], [])
