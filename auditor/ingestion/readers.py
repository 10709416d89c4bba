"""Streaming readers for label files in long format: CSV (with a header) and JSON Lines.

Both yield ``RawBatch``es of at most ``batch_size`` rows, so memory stays bounded whatever the
file size. Row numbers are file lines (the CSV header is line 1), the numbers a person sees in
an editor. Bytes that are not UTF-8 do not stop the reader: in CSV they reach the validator as
lone surrogates (reported per field), in JSONL the line is reported as not UTF-8.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from auditor.ingestion.batch import FIELDS, REQUIRED_FIELDS, RawBatch
from auditor.ingestion.errors import FileFormatError, RowError

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
MAX_LINE_BYTES = 1 << 20  # a JSON line longer than this is refused without reading it whole


def detect_format(path: Path) -> str:
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise FileFormatError(
            f"{path.name}: unknown file type {path.suffix!r}; use .csv, .jsonl or .ndjson"
        ) from None


class LabelFileReader:
    """Iterate over a label file in batches; ``position``/``size`` (bytes) drive a progress bar.

    >>> for batch in LabelFileReader(Path("labels.csv"), batch_size=10_000): ...
    """

    def __init__(self, path: Path, batch_size: int, file_format: str | None = None) -> None:
        self.path = path
        self.batch_size = batch_size
        self.format = file_format or detect_format(path)
        self.size = path.stat().st_size
        self._binary: BinaryIO | None = None

    @property
    def position(self) -> int:
        if self._binary is None or self._binary.closed:
            return self.size
        return self._binary.tell()

    def __iter__(self) -> Iterator[RawBatch]:
        with self.path.open("rb") as binary:
            self._binary = binary
            if self.format == "csv":
                yield from self._csv_batches(binary)
            else:
                yield from self._jsonl_batches(binary)

    def _csv_batches(self, binary: BinaryIO) -> Iterator[RawBatch]:
        text = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.reader(text)
        columns = _csv_columns(self.path, next(reader, None))
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
                errors.append(RowError(last_line + 1, None, f"is not valid CSV: {error}"))
                last_line = reader.line_num
                continue
            row, last_line = last_line + 1, reader.line_num
            if len(record) != width:
                if not record:
                    continue  # a blank line
                message = f"has {len(record)} fields, the header has {width}"
                errors.append(RowError(row, None, message))
            else:
                records.append(record)
                rows.append(row)
            if len(rows) + len(errors) >= self.batch_size:
                yield _csv_batch(columns, records, rows, errors)
                records, rows, errors = [], [], []
        if rows or errors:
            yield _csv_batch(columns, records, rows, errors)

    def _jsonl_batches(self, binary: BinaryIO) -> Iterator[RawBatch]:
        records: list[dict[str, object]] = []
        rows: list[int] = []
        errors: list[RowError] = []
        line_number = 0
        while True:
            raw = binary.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            line_number += 1
            record, error = _jsonl_record(raw, line_number)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := binary.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass  # skip the rest of an over-long line without holding it
                error = f"is longer than {MAX_LINE_BYTES} bytes"
            if error is not None:
                errors.append(RowError(line_number, None, error))
            elif record is not None:
                records.append(record)
                rows.append(line_number)
            if len(rows) + len(errors) >= self.batch_size:
                yield _jsonl_batch(records, rows, errors)
                records, rows, errors = [], [], []
        if rows or errors:
            yield _jsonl_batch(records, rows, errors)


def _csv_columns(path: Path, header: list[str] | None) -> list[str]:
    if header is None:
        raise FileFormatError(f"{path.name} is empty: expected a header line")
    columns = [name.strip().lower() for name in header]
    expected = ", ".join(FIELDS)
    missing = [name for name in REQUIRED_FIELDS if name not in columns]
    if missing:
        raise FileFormatError(
            f"{path.name}, line 1: missing column(s) {', '.join(missing)}; columns are {expected}"
        )
    unknown = [name for name in columns if name not in FIELDS]
    if unknown:
        raise FileFormatError(
            f"{path.name}, line 1: unknown column(s) {', '.join(map(repr, unknown))}; "
            f"columns are {expected}"
        )
    repeated = sorted({name for name in columns if columns.count(name) > 1})
    if repeated:
        raise FileFormatError(f"{path.name}, line 1: repeated column(s) {', '.join(repeated)}")
    return columns


def _csv_batch(
    columns: list[str], records: list[list[str]], rows: list[int], errors: list[RowError]
) -> RawBatch:
    transposed = [list(values) for values in zip(*records, strict=True)] if records else None
    by_name = {
        name: (transposed[index] if transposed else []) for index, name in enumerate(columns)
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


def _jsonl_record(raw: bytes, line_number: int) -> tuple[dict[str, object] | None, str | None]:
    """One JSON line -> (record, None), (None, error), or (None, None) for a blank line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"is not valid UTF-8 (byte {error.start + 1} of the line)"
    if line_number == 1:
        text = text.removeprefix("\ufeff")
    if not text.strip():
        return None, None
    try:
        record = json.loads(text)
    except ValueError as error:
        return None, f"is not valid JSON: {error}"
    if not isinstance(record, dict):
        return None, f"must be a JSON object, got {type(record).__name__}"
    unknown = sorted(str(name) for name in record if name not in FIELDS)
    if unknown:
        return None, f"unknown field(s) {', '.join(unknown)}; fields are {', '.join(FIELDS)}"
    return record, None


def _jsonl_batch(
    records: list[dict[str, object]], rows: list[int], errors: list[RowError]
) -> RawBatch:
    columns = {name: [record.get(name) for record in records] for name in FIELDS}
    return RawBatch(rows=rows, errors=errors, **columns)  # type: ignore[arg-type]
