"""CSV, TSV and other delimited text with a header line: the long format of ``auditor import``.

The delimiter is sniffed from the header line (comma, tab, semicolon or pipe, the most
frequent; ``options.delimiter`` forces one); ``options.mapping`` names the file's column for
a field; columns that are no field are ignored and listed (``strict`` refuses them); a UTF-8
BOM is skipped. Row numbers are file lines (the header is line 1). Bytes that are not UTF-8
reach the row checks as lone surrogates, reported per field. pyarrow parses the file
(``arrow_csv``); a file it cannot take is read by the Python reader from where it stopped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa

from auditor.ingestion.arrow_csv import arrow_batches, prescan
from auditor.ingestion.batch import FIELDS, REQUIRED_FIELDS, AnyBatch, RawBatch
from auditor.ingestion.errors import FileFormatError, RowError
from auditor.ingestion.formats.base import ReadOptions, Source

MAX_LINE_BYTES = 1 << 20  # the header line is read with this cap


def sniff_delimiter(header: str) -> str:
    """The candidate (comma, tab, semicolon, pipe) found most often in the header line;
    comma when none is (a one-column header: the missing-column error follows)."""
    counts = {d: header.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


class DelimitedFormat:
    name: str = "csv"
    extensions: tuple[str, ...] = (".csv", ".tsv", ".txt")
    summary: str = "delimited text with a header: item, rater, label[, session, labeled_at, ...]"

    def batches(self, binary: BinaryIO, source: Source) -> Iterator[AnyBatch]:
        state = source.state
        first = binary.readline(MAX_LINE_BYTES)
        binary.seek(0)
        header_text = first.decode("utf-8-sig", errors="replace")
        state.delimiter = source.options.delimiter or sniff_delimiter(header_text)
        text = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.reader(text, delimiter=state.delimiter)
        header = next(reader, None)
        columns = _columns(source.path, header, source.options, state.delimiter)
        state.ignored_columns = [
            c for c, name in zip(header or [], columns, strict=True) if not name
        ]
        given = 1  # the last line given in a batch
        if source.columnar:
            text.detach()  # let go of ``binary`` without closing it
            scan = prescan(binary)
            if scan is not None:
                try:
                    for batch in arrow_batches(
                        binary, columns, state.delimiter, source.batch_size, scan
                    ):
                        yield batch
                        given = max(given, batch.last_line)
                    return
                except pa.ArrowInvalid:
                    pass  # e.g. a bad row that is not UTF-8: Python reads the rest
            binary.seek(0)  # the Python reader reads this file (see arrow_csv)
            text = io.TextIOWrapper(
                binary, encoding="utf-8-sig", errors="surrogateescape", newline=""
            )
            reader = csv.reader(text, delimiter=state.delimiter)
            next(reader, None)
        yield from _python_batches(reader, columns, given, source.batch_size)


def _python_batches(
    reader: Any, columns: list[str], given: int, batch_size: int
) -> Iterator[RawBatch]:
    """The rows after line ``given``, read by Python's csv module (``reader``: a
    ``csv.reader``, whose ``line_num`` counts physical lines)."""
    width = len(columns)
    records: list[list[str]] = []
    rows: list[int] = []
    errors: list[RowError] = []
    last_line = reader.line_num
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            if last_line + 1 > given:
                errors.append(RowError(last_line + 1, None, f"is not valid CSV: {error}"))
            last_line = reader.line_num
            continue
        row, last_line = last_line + 1, reader.line_num
        if row <= given:
            continue  # given by the pyarrow reader before it stopped
        if len(record) != width:
            if not record:
                continue  # a blank line
            message = f"has {len(record)} fields, the header has {width}"
            errors.append(RowError(row, None, message))
        else:
            records.append(record)
            rows.append(row)
        if len(rows) + len(errors) >= batch_size:
            yield _batch(columns, records, rows, errors)
            records, rows, errors = [], [], []
    if rows or errors:
        yield _batch(columns, records, rows, errors)


def _columns(
    path: Path, header: list[str] | None, options: ReadOptions, delimiter: str
) -> list[str]:
    """The field each header column feeds, "" for a column that is ignored."""
    if header is None:
        raise FileFormatError(f"{path.name} is empty: expected a header line")
    given = [name.strip() for name in header]
    lowered = [name.lower() for name in given]
    by_column = {}
    for name, column in options.mapping.items():
        if column.lower() not in lowered:
            raise FileFormatError(
                f"{path.name}, line 1: --map {name}={column}: no column {column!r} "
                f"(columns: {', '.join(given)})"
            )
        by_column[column.lower()] = name
    mapped = set(options.mapping)
    columns = [
        by_column.get(name, name if name in FIELDS and name not in mapped else "")
        for name in lowered
    ]
    expected = ", ".join(FIELDS)
    missing = [name for name in REQUIRED_FIELDS if name not in columns]
    if missing:
        shown_delimiter = "tab" if delimiter == "\t" else repr(delimiter)
        raise FileFormatError(
            f"{path.name}, line 1: missing column(s) {', '.join(missing)}; columns are "
            f"{expected} (read with delimiter {shown_delimiter}: {', '.join(given)}; "
            "see --delimiter and --map)"
        )
    unknown = [name for name, column in zip(given, columns, strict=True) if not column]
    if unknown and options.strict:
        raise FileFormatError(
            f"{path.name}, line 1: unknown column(s) {', '.join(map(repr, unknown))}; "
            f"columns are {expected} (--strict)"
        )
    kept = [column for column in columns if column]
    repeated = sorted({name for name in kept if kept.count(name) > 1})
    if repeated:
        raise FileFormatError(f"{path.name}, line 1: repeated column(s) {', '.join(repeated)}")
    return columns


def _batch(
    columns: list[str], records: list[list[str]], rows: list[int], errors: list[RowError]
) -> RawBatch:
    transposed = [list(values) for values in zip(*records, strict=True)] if records else None
    by_name = {
        name: (transposed[index] if transposed else [])
        for index, name in enumerate(columns)
        if name
    }
    return RawBatch(
        rows=rows,
        item=by_name["item"],
        rater=by_name["rater"],
        label=by_name["label"],
        session=by_name.get("session"),
        labeled_at=by_name.get("labeled_at"),
        rater_kind=by_name.get("rater_kind"),
        key=by_name.get("key"),
        errors=errors,
    )


FORMAT = DelimitedFormat()
