"""JSON Lines: one label object a line, with the fields of the long format.

``options.mapping`` names the record's key for a field; keys that are no field are ignored and
listed (``strict`` refuses them). Row numbers are file lines; a blank line is skipped; a line
that is not UTF-8, not JSON, not an object or longer than ``MAX_LINE_BYTES`` is a row error.
pyarrow parses the file when every line is a flat object (``arrow_json``); otherwise, or from
where it stopped, the Python reader does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import BinaryIO

import pyarrow as pa

from auditor.ingestion.arrow_json import NotColumnar, arrow_json_batches, field_columns
from auditor.ingestion.arrow_json import prescan as prescan_jsonl
from auditor.ingestion.batch import FIELDS, AnyBatch, RawBatch
from auditor.ingestion.errors import RowError
from auditor.ingestion.formats.base import ReadOptions, Source

MAX_LINE_BYTES = 1 << 20  # a JSON line longer than this is refused without reading it whole


class JsonLinesFormat:
    name: str = "jsonl"
    extensions: tuple[str, ...] = (".jsonl", ".ndjson")
    summary: str = "JSON Lines, one object a line with the long format's fields"

    def batches(self, binary: BinaryIO, source: Source) -> Iterator[AnyBatch]:
        state = source.state
        ignored: dict[str, None] = {}  # field names ignored, in order of first sight
        state.ignored_columns = []
        given = 0  # the last line given by the pyarrow reader
        columns = field_columns(dict(source.options.mapping))
        scan = prescan_jsonl(binary, MAX_LINE_BYTES) if source.columnar and columns else None
        if scan is not None and columns is not None:
            try:
                for batch in arrow_json_batches(
                    binary, columns, source.batch_size, scan, ignored, source.options.strict
                ):
                    state.ignored_columns = list(ignored)
                    yield batch
                    given = max(given, batch.last_line)
                return
            except (pa.ArrowInvalid, NotColumnar):
                pass  # the Python reader reads the rest (see arrow_json)
        binary.seek(0)
        records: list[dict[str, object]] = []
        rows: list[int] = []
        errors: list[RowError] = []
        for raw, line_number, error in lines(binary, given):
            record = None
            if error is None:
                record, error = _record(raw, line_number, source.options, ignored)
            if error is not None:
                errors.append(RowError(line_number, None, error))
            elif record is not None:
                records.append(record)
                rows.append(line_number)
            state.ignored_columns = list(ignored)
            if len(rows) + len(errors) >= source.batch_size:
                yield _batch(records, rows, errors)
                records, rows, errors = [], [], []
        if rows or errors:
            yield _batch(records, rows, errors)


def lines(binary: BinaryIO, after: int = 0) -> Iterator[tuple[bytes, int, str | None]]:
    """(line, its number, None) for each line after line ``after``, or (b"", number, error)
    for one longer than ``MAX_LINE_BYTES``, whose rest is skipped without being held."""
    line_number = 0
    while True:
        raw = binary.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        line_number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := binary.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass  # skip the rest of an over-long line without holding it
            if line_number > after:
                yield b"", line_number, f"is longer than {MAX_LINE_BYTES} bytes"
            continue
        if line_number > after:
            yield raw, line_number, None


def objects(binary: BinaryIO) -> Iterator[tuple[int, dict[str, object] | None, str | None]]:
    """(line number, object, None) or (line number, None, error) for each non-blank line: the
    line reading of JSON Lines for formats whose lines are a tool's records."""
    for raw, line_number, error in lines(binary):
        found = None
        if error is None:
            found, error = json_object(raw, line_number)
        if found is not None or error is not None:
            yield line_number, found, error


def json_object(raw: bytes, line_number: int) -> tuple[dict[str, object] | None, str | None]:
    """One line -> (object, None), (None, error), or (None, None) for a blank line."""
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
    return record, None


def _record(
    raw: bytes, line_number: int, options: ReadOptions, ignored: dict[str, None]
) -> tuple[dict[str, object] | None, str | None]:
    """One JSON line -> (record, None), (None, error), or (None, None) for a blank line.
    Fields renamed by ``options.mapping``; others ignored (names added to ``ignored``) or,
    with ``options.strict``, an error."""
    record, error = json_object(raw, line_number)
    if record is None:
        return None, error
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


def _batch(records: list[dict[str, object]], rows: list[int], errors: list[RowError]) -> RawBatch:
    columns = {name: [record.get(name) for record in records] for name in FIELDS}
    return RawBatch(rows=rows, errors=errors, **columns)  # type: ignore[arg-type]


FORMAT = JsonLinesFormat()
