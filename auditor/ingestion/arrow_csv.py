"""CSV read by pyarrow's reader, in C, as columns (``ColumnBatch``es): the file in chunks of
whole lines (memory stays bounded), each chunk parsed on every core.

The Python reader (``readers.py``) stays the reference: this one reads the same files the
same way, giving the same line numbers, and where it could not (a quoted field holding a line
break, a lone carriage return as a line end) ``prescan`` says so before anything is read and
the caller falls back to the Python reader. Line numbers: every data record is one physical
line (the prescan ensures it); blank lines are skipped by both readers and found by the
prescan, rows with a wrong number of fields are reported by pyarrow with their physical
line; the n-th record is then the n-th physical line that is neither.

Values are read as text without pyarrow's UTF-8 check: the prescan has decoded every byte (a
file that is not UTF-8 goes to the Python reader, which reports each bad field). Id columns
come dictionary-encoded from the reader itself (one pass, no copy of the values); a batch cut
from a larger block keeps the block's dictionary, which ``columnar`` trims to the values used.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from auditor.ingestion.batch import FIELDS, RawBatch, ValidBatch
from auditor.ingestion.errors import RowError

PRESCAN_CHUNK = 16 << 20
_CONTENT = re.compile(rb"[^\r\n]")
BLOCK_SIZE = (1 << 20, 64 << 20)  # bytes pyarrow parses at once: least, most


@dataclass(frozen=True)
class Prescan:
    """What the byte scan found: lines (1-based) that are blank, and whether any line after
    the header holds something."""

    blank_lines: np.ndarray
    has_rows: bool


def _has_blank_line(chunk: bytes) -> bool:
    """Does a chunk of whole lines hold an empty line ("\n\n", or "\n\r\n" with CRLF)?
    Two 16-bit views, one per alignment, find "\n\n" 5x faster than a regex."""
    if chunk.startswith((b"\n", b"\r\n")):
        return True
    even = np.frombuffer(chunk, dtype=np.uint16, count=len(chunk) // 2)
    odd = np.frombuffer(chunk, dtype=np.uint16, count=(len(chunk) - 1) // 2, offset=1)
    if (even == 0x0A0A).any() or (odd == 0x0A0A).any():
        return True
    return b"\r" in chunk and b"\n\r\n" in chunk


def _lines_before(binary: BinaryIO, end: int) -> int:
    """How many lines end in the first ``end`` bytes (read again: only for a file with blank
    lines, whose later line numbers need it)."""
    binary.seek(0)
    lines, left = 0, end
    while left > 0 and (piece := binary.read(min(left, PRESCAN_CHUNK))):
        lines += piece.count(b"\n")
        left -= len(piece)
    binary.seek(end)
    return lines


def prescan(binary: BinaryIO) -> Prescan | None:
    """Scan the file's bytes once (in chunks of whole lines, so memory stays bounded): blank
    lines, and whether every record is one line. None: the Python reader must read this
    file (a quoted line break, unbalanced quotes, a lone carriage return, bytes that are not
    UTF-8). Lines are counted only from the first chunk holding a blank line on: a file
    without one (the usual case) is never counted, each test being a pass at memory speed."""
    blank: list[np.ndarray] = []
    line_offset: int | None = None  # lines ended before the current chunk, once needed
    has_rows = False
    binary.seek(0)
    position = 0  # offset of the current chunk
    while chunk := binary.read(PRESCAN_CHUNK):
        if not chunk.endswith(b"\n"):
            chunk += binary.readline()  # whole lines: a chunk starts at a line start
        if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
            return None  # a lone CR ends a line for Python's csv module
        try:
            if not chunk.isascii():  # ASCII is UTF-8; isascii is 4x faster than decode
                chunk.decode("utf-8")  # whole lines: no character is cut
        except UnicodeDecodeError:
            return None  # reported per field by the Python reader
        if not has_rows:  # anything but line ends after the header line (a search, no copy)
            body = 0 if position else chunk.find(b"\n") + 1 or len(chunk)
            has_rows = _CONTENT.search(chunk, body) is not None
        quoted = b'"' in chunk
        has_blank = _has_blank_line(chunk)
        if quoted or has_blank:
            data = np.frombuffer(chunk, dtype=np.uint8)
            ends = np.flatnonzero(data == 10)
            if quoted:
                quotes = np.flatnonzero(data == 34)
                per_line = np.bincount(np.searchsorted(ends, quotes), minlength=len(ends) + 1)
                if (per_line % 2).any():
                    return None  # a quoted field spans a line end (or quotes are unbalanced)
            if has_blank:
                if line_offset is None:
                    line_offset = _lines_before(binary, position) if position else 0
                    binary.seek(position + len(chunk))
                starts = np.concatenate(([-1], ends[:-1])) + 1
                length = ends - starts
                is_blank = (length == 0) | ((length == 1) & (data[np.maximum(ends - 1, 0)] == 13))
                blank.append(np.flatnonzero(is_blank) + line_offset + 1)
        if line_offset is not None:
            line_offset += chunk.count(b"\n")
        position += len(chunk)
    binary.seek(0)
    found = np.concatenate(blank) if blank else np.empty(0, dtype=np.int64)
    return Prescan(blank_lines=found[found > 1].astype(np.int64), has_rows=has_rows)


class ColumnBatch:
    """A batch read by pyarrow: ``table`` holds one text column per field (dictionary-encoded
    or not), ``lines`` the 1-based line of each record. Behaves as a ``RawBatch`` (its lists
    are made on first use) and validates column-wise (``auditor.ingestion.columnar``)."""

    def __init__(self, table: pa.Table, lines: np.ndarray, errors: list[RowError]) -> None:
        self.table = table
        self.lines = lines
        self.errors = errors
        self._raw: RawBatch | None = None

    def __len__(self) -> int:
        return len(self.lines) + len({error.row for error in self.errors})

    @property
    def last_line(self) -> int:
        """The last line this batch gives (a record or a bad row)."""
        return max([int(self.lines[-1]) if len(self.lines) else 1] + [e.row for e in self.errors])

    def text(self) -> pa.Table:
        """The columns, as text."""
        return self.table

    def raw(self) -> RawBatch:
        """The batch as the Python reader gives it."""
        if self._raw is None:
            columns: dict[str, list[object]] = {
                name: self.table.column(name).to_pylist() for name in self.table.column_names
            }
            self._raw = RawBatch(rows=self.lines.tolist(), errors=self.errors, **columns)
        return self._raw

    def validated(self, categories: list[str] | None) -> ValidBatch:
        from auditor.ingestion.columnar import validate_columns

        return validate_columns(self.text(), self.lines, self.errors, categories)

    # The RawBatch interface, for code that reads a batch's lists.
    @property
    def rows(self) -> list[int]:
        return self.raw().rows

    def __getattr__(self, name: str) -> object:
        if name in FIELDS:
            return getattr(self.raw(), name)
        raise AttributeError(name)


_ID_TEXT = pa.dictionary(pa.int32(), pa.string())


def _column_type(name: str) -> pa.DataType:
    """labeled_at as plain text (its values are mostly distinct); every other field an id,
    dictionary-encoded as it is read."""
    return pa.string() if name == "labeled_at" else _ID_TEXT


def _line_chunks(binary: BinaryIO, size: int) -> Iterator[bytes]:
    """The file after its header line, in pieces of about ``size`` bytes of whole lines."""
    binary.seek(0)
    binary.readline()  # the header: one line (the prescan refused quoted line breaks)
    while data := binary.read(size):
        if not data.endswith(b"\n"):
            data += binary.readline()
        yield data


class _Chunk:
    """One chunk parsed by pyarrow on every core, and its records of a wrong field count as
    (number among the chunk's non-blank lines, fields). pyarrow numbers such a record only
    when it parses serially: a chunk holding one is parsed again that way."""

    def __init__(self, data: bytes, names: list[str], kept: list[str], delimiter: str) -> None:
        self.invalid: list[tuple[int, int]] = []
        self.table = self._parse(data, names, kept, delimiter, threads=True)
        if self.invalid and any(number < 0 for number, _ in self.invalid):
            self.invalid.clear()
            self.table = self._parse(data, names, kept, delimiter, threads=False)

    def _on_invalid(self, row: pa_csv.InvalidRow) -> str:
        self.invalid.append((-1 if row.number is None else int(row.number), row.actual_columns))
        return "skip"

    def _parse(
        self, data: bytes, names: list[str], kept: list[str], delimiter: str, threads: bool
    ) -> pa.Table:
        return pa_csv.read_csv(
            pa.BufferReader(data),
            read_options=pa_csv.ReadOptions(
                use_threads=threads,
                # blocks a quarter of the chunk: each core gets some; a line must fit one
                block_size=max(len(data) // 4 + 1, BLOCK_SIZE[0]),
                column_names=names,
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, invalid_row_handler=self._on_invalid
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: _column_type(name) for name in kept},
                check_utf8=False,  # the prescan decoded every byte
                include_columns=kept,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )


def arrow_batches(
    binary: BinaryIO,
    columns: list[str],
    delimiter: str,
    batch_size: int,
    scan: Prescan,
) -> Iterator[ColumnBatch]:
    """Batches of at most ``batch_size`` records of a CSV whose header (line 1) gave
    ``columns`` (the field each column feeds, "" for an ignored one). The file is parsed in
    chunks of whole lines (memory stays bounded), each on every core."""
    if not scan.has_rows:
        return  # the header alone (pyarrow refuses to skip it): no rows, as in Python
    width = len(columns)
    names = [name or f"ignored {index}" for index, name in enumerate(columns)]
    kept = [name for name in names if not name.startswith("ignored ")]
    invalid: list[int] = []  # lines of records with a wrong number of fields
    pending: list[RowError] = []
    # A non-blank line's number among the non-blank lines (the header is 1) -> its line.
    blank_gaps = scan.blank_lines - np.arange(len(scan.blank_lines))
    done = 0  # records read so far
    size = min(max(batch_size * 48, BLOCK_SIZE[0]), BLOCK_SIZE[1])
    for data in _line_chunks(binary, size):
        chunk = _Chunk(data, names, kept, delimiter)
        before = 1 + done + len(invalid)  # non-blank lines before the chunk
        for number, fields in chunk.invalid:
            line = before + number
            line += int(np.searchsorted(blank_gaps, line, side="right"))
            invalid.append(line)
            message = f"has {fields} fields, the header has {width}"
            pending.append(RowError(line, None, message))
        table = chunk.table
        # Disjoint (a blank line has no field count to be wrong): a sort, not np.union1d,
        # whose np.unique imports numpy.ma (10 ms of a one-shot `auditor stats`).
        excluded = np.sort(np.concatenate((scan.blank_lines, np.asarray(invalid, np.int64))))
        # The n-th record (0-based) is on the n-th line from 2 that is not excluded.
        gaps = excluded - np.arange(len(excluded)) - 2
        positions = np.arange(done, done + len(table), dtype=np.int64)
        lines = positions + 2 + np.searchsorted(gaps, positions, side="right")
        done += len(table)
        for start in range(0, len(table), batch_size):
            last = int(lines[min(start + batch_size, len(lines)) - 1])
            errors = [e for e in pending if e.row < last]
            pending[:] = [e for e in pending if e.row >= last]
            yield ColumnBatch(
                table.slice(start, batch_size), lines[start : start + batch_size], errors
            )
    if pending:
        yield ColumnBatch(
            pa.table({name: pa.array([], _column_type(name)) for name in kept}),
            np.empty(0, dtype=np.int64),
            sorted(pending, key=lambda error: error.row),
        )
