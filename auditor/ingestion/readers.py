"""Streaming readers for label files in long format: CSV (with a header) and JSON Lines; and
Label Studio JSON exports.

All yield ``RawBatch``es of at most ``batch_size`` rows, so memory stays bounded whatever the
file size (a Label Studio export is one JSON document, read whole). Row numbers are file lines
(the CSV header is line 1), the numbers a person sees in an editor; in a Label Studio export
a row is the n-th annotation of the file. Bytes that are not UTF-8 do not stop the reader: in
CSV they reach the validator as lone surrogates (reported per field), in JSONL the line is
reported as not UTF-8.

Files from other tools: the CSV delimiter is sniffed from the header line (comma, tab,
semicolon or pipe, the most frequent; ``delimiter`` forces one); ``mapping`` names the file's
column for a field (``{"item": "case_id"}``); columns (or JSONL fields) that are no field are
ignored and listed in ``ignored_columns`` (``strict`` refuses them); a UTF-8 BOM is skipped.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from auditor.ingestion.arrow_csv import arrow_batches, prescan
from auditor.ingestion.arrow_json import NotColumnar, arrow_json_batches, field_columns
from auditor.ingestion.arrow_json import prescan as prescan_jsonl
from auditor.ingestion.batch import FIELDS, REQUIRED_FIELDS, AnyBatch, RawBatch
from auditor.ingestion.errors import FileFormatError, RowError
from auditor.ingestion.label_studio import (
    LabelStudioFormatError,
    LabelStudioOptions,
    export_annotations,
)

FORMATS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "label-studio",
}
DELIMITERS = {",": ",", "\t": "\t", "tab": "\t", ";": ";", "|": "|", "pipe": "|"}
MAX_LINE_BYTES = 1 << 20  # a JSON line longer than this is refused without reading it whole


@dataclass(frozen=True)
class ReadOptions:
    """How to read a file from another tool (see the module docstring)."""

    delimiter: str | None = None
    mapping: Mapping[str, str] = field(default_factory=dict)  # field -> the file's column
    strict: bool = False
    label_studio: LabelStudioOptions = field(default_factory=LabelStudioOptions)


def parse_mapping(text: str) -> dict[str, str]:
    """``item=case_id,rater=annotator`` -> {"item": "case_id", ...}; ValueError naming a bad
    part or an unknown field."""
    mapping: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, column = part.partition("=")
        name, column = name.strip().lower(), column.strip()
        if not sep or not column:
            raise ValueError(f"--map: {part!r} is not FIELD=COLUMN")
        if name not in FIELDS:
            raise ValueError(f"--map: {name!r} is no field; fields are {', '.join(FIELDS)}")
        mapping[name] = column
    return mapping


def parse_delimiter(text: str) -> str:
    try:
        return DELIMITERS[text.lower()]
    except KeyError:
        raise ValueError(
            f"--delimiter: {text!r} is not one of ',', 'tab', ';', '|' (or '\\t', 'pipe')"
        ) from None


def sniff_delimiter(header: str) -> str:
    """The candidate (comma, tab, semicolon, pipe) found most often in the header line;
    comma when none is (a one-column header: the missing-column error follows)."""
    counts = {d: header.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def detect_format(path: Path) -> str:
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise FileFormatError(
            f"{path.name}: unknown file type {path.suffix!r}; use .csv, .tsv, .txt, .jsonl, "
            ".ndjson or .json (a Label Studio export), or give --format"
        ) from None


class LabelFileReader:
    """Iterate over a label file in batches; ``position``/``size`` (bytes) drive a progress bar.

    >>> for batch in LabelFileReader(Path("labels.csv"), batch_size=10_000): ...
    """

    def __init__(
        self,
        path: Path,
        batch_size: int,
        file_format: str | None = None,
        options: ReadOptions | None = None,
        *,
        columnar: bool = True,
    ) -> None:
        self.path = path
        self.batch_size = batch_size
        self.format = file_format or detect_format(path)
        self.options = options or ReadOptions()
        self.size = path.stat().st_size
        self._binary: BinaryIO | None = None
        self.ignored_columns: list[str] = []  # known once the header (or file) is read
        self.delimiter: str | None = None
        self.skipped: Counter[str] = Counter()  # Label Studio: annotations skipped, by reason
        self.ignored_results: Counter[str] = Counter()  # Label Studio: other result types
        self.columnar = columnar  # CSV through pyarrow (False: the Python reference reader)

    @property
    def position(self) -> int:
        if self._binary is None or self._binary.closed:
            return self.size
        return self._binary.tell()

    def __iter__(self) -> Iterator[AnyBatch]:
        with self.path.open("rb") as binary:
            self._binary = binary
            if self.format == "csv":
                yield from self._csv_batches(binary)
            elif self.format == "label-studio":
                yield from self._label_studio_batches(binary)
            else:
                yield from self._jsonl_batches(binary)

    def _csv_batches(self, binary: BinaryIO) -> Iterator[AnyBatch]:
        first = binary.readline(MAX_LINE_BYTES)
        binary.seek(0)
        header_text = first.decode("utf-8-sig", errors="replace")
        self.delimiter = self.options.delimiter or sniff_delimiter(header_text)
        text = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.reader(text, delimiter=self.delimiter)
        header = next(reader, None)
        columns = _csv_columns(self.path, header, self.options, self.delimiter)
        self.ignored_columns = [
            c for c, name in zip(header or [], columns, strict=True) if not name
        ]
        given = 1  # the last line given in a batch
        if self.columnar:
            text.detach()  # let go of ``binary`` without closing it
            scan = prescan(binary)
            if scan is not None:
                try:
                    for batch in arrow_batches(
                        binary, columns, self.delimiter, self.batch_size, scan
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
            reader = csv.reader(text, delimiter=self.delimiter)
            next(reader, None)
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
            if len(rows) + len(errors) >= self.batch_size:
                yield _csv_batch(columns, records, rows, errors)
                records, rows, errors = [], [], []
        if rows or errors:
            yield _csv_batch(columns, records, rows, errors)

    def _jsonl_batches(self, binary: BinaryIO) -> Iterator[AnyBatch]:
        ignored: dict[str, None] = {}  # field names ignored, in order of first sight
        self.ignored_columns = []
        given = 0  # the last line given by the pyarrow reader
        columns = field_columns(dict(self.options.mapping))
        scan = prescan_jsonl(binary, MAX_LINE_BYTES) if self.columnar and columns else None
        if scan is not None and columns is not None:
            try:
                for batch in arrow_json_batches(
                    binary, columns, self.batch_size, scan, ignored, self.options.strict
                ):
                    self.ignored_columns = list(ignored)
                    yield batch
                    given = max(given, batch.last_line)
                return
            except (pa.ArrowInvalid, NotColumnar):
                pass  # the Python reader reads the rest (see arrow_json)
        binary.seek(0)
        records: list[dict[str, object]] = []
        rows: list[int] = []
        errors: list[RowError] = []
        line_number = 0
        while True:
            raw = binary.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            line_number += 1
            if line_number <= given:
                continue  # given by the pyarrow reader before it stopped (lines fit: prescan)
            record, error = _jsonl_record(raw, line_number, self.options, ignored)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := binary.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass  # skip the rest of an over-long line without holding it
                error = f"is longer than {MAX_LINE_BYTES} bytes"
            if error is not None:
                errors.append(RowError(line_number, None, error))
            elif record is not None:
                records.append(record)
                rows.append(line_number)
            self.ignored_columns = list(ignored)
            if len(rows) + len(errors) >= self.batch_size:
                yield _jsonl_batch(records, rows, errors)
                records, rows, errors = [], [], []
        if rows or errors:
            yield _jsonl_batch(records, rows, errors)

    def _label_studio_batches(self, binary: BinaryIO) -> Iterator[RawBatch]:
        try:
            tasks = json.loads(binary.read().decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as error:
            raise FileFormatError(f"{self.path.name}: not a JSON document: {error}") from None
        records: list[dict[str, object]] = []
        rows: list[int] = []
        row = 0
        try:
            for _, _, mapped in export_annotations(tasks, self.options.label_studio):
                row += 1
                self.ignored_results.update(mapped.ignored)
                if mapped.record is None:
                    self.skipped[str(mapped.skipped)] += 1
                    continue
                records.append(mapped.record)
                rows.append(row)
                if len(rows) >= self.batch_size:
                    yield _numbered(records, rows)
                    records, rows = [], []
        except LabelStudioFormatError as error:
            raise FileFormatError(f"{self.path.name}: {error}") from None
        if rows:
            yield _numbered(records, rows)


def _numbered(records: list[dict[str, object]], rows: list[int]) -> RawBatch:
    batch = RawBatch.from_records(records)
    batch.rows = rows
    return batch


def _csv_columns(
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


def _csv_batch(
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


def _jsonl_record(
    raw: bytes, line_number: int, options: ReadOptions, ignored: dict[str, None]
) -> tuple[dict[str, object] | None, str | None]:
    """One JSON line -> (record, None), (None, error), or (None, None) for a blank line.
    Fields renamed by ``options.mapping``; others ignored (names added to ``ignored``) or,
    with ``options.strict``, an error."""
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
    renamed = {column: name for name, column in options.mapping.items()}
    kept: dict[str, object] = {}
    unknown: list[str] = []
    for key, value in record.items():
        # A field named by --map comes from its mapped column; a column of that field's own
        # name is then one more ignored column.
        name = renamed.get(key) or (key if key in FIELDS and key not in options.mapping else None)
        if name is None:
            unknown.append(str(key))
        else:
            kept[name] = value
    if unknown and options.strict:
        listed = ", ".join(sorted(unknown))
        return None, f"unknown field(s) {listed}; fields are {', '.join(FIELDS)} (--strict)"
    ignored.update(dict.fromkeys(unknown))
    return kept, None


def _jsonl_batch(
    records: list[dict[str, object]], rows: list[int], errors: list[RowError]
) -> RawBatch:
    columns = {name: [record.get(name) for record in records] for name in FIELDS}
    return RawBatch(rows=rows, errors=errors, **columns)  # type: ignore[arg-type]
