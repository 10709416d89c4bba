"""What an import format is: a name, the file extensions it claims, and a reader of batches.

A format reads a file into ``RawBatch``es (or the CSV path's columnar batches) of at most
``source.batch_size`` rows, numbering rows so that an error can be found again: file lines for
line-based formats, and for documents a row number with a place (``source.state.places``:
"task 12 (id 701), annotation 2 (id 33)"). What it leaves out goes into ``source.state``
(columns it ignored, records it skipped by reason, results of other types), which the commands
print after the import. A format never writes anything and never decides whether a label is
valid: the row checks of ``auditor.ingestion.batch`` do that for every format alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from auditor.ingestion.batch import RawBatch
from auditor.ingestion.errors import RowError
from auditor.ingestion.label_studio import LabelStudioOptions

if TYPE_CHECKING:
    from auditor.ingestion.batch import AnyBatch


@dataclass(frozen=True)
class ReadOptions:
    """How to read a file from another tool. ``mapping`` names the file's column for a field
    (``{"item": "case_id"}``); ``strict`` refuses columns that are no field; ``item_field`` is
    where a document format finds the item (Label Studio ``data.<key>``, Prodigy and doccano a
    key of the record, dotted for nested ones); ``label_studio`` holds that format's options."""

    delimiter: str | None = None
    mapping: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    label_studio: LabelStudioOptions = field(default_factory=LabelStudioOptions)
    item_field: str | None = None


@dataclass
class ReadState:
    """What a read left out or learned, for the notices printed after it."""

    ignored_columns: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # records skipped, by reason
    ignored_results: Counter[str] = field(default_factory=Counter)  # Label Studio: other types
    delimiter: str | None = None
    places: dict[int, str] = field(default_factory=dict)  # row -> where it is in a document


@dataclass
class Source:
    """One file being read: where, in what batches, with which options."""

    path: Path
    batch_size: int
    options: ReadOptions
    columnar: bool = True  # CSV and JSONL through pyarrow (False: the Python reference reader)
    state: ReadState = field(default_factory=ReadState)


class ImportFormat(Protocol):
    """One import format (a module of ``auditor.ingestion.formats``, registered in
    ``FORMATS``)."""

    name: str  # the value of --format
    extensions: tuple[str, ...]  # suffixes that select it without --format ("" for none)
    summary: str  # one line: what files it reads

    def batches(self, binary: BinaryIO, source: Source) -> Iterator[AnyBatch]:
        """The file's rows in batches (see the module docstring)."""
        ...


def numbered(records: list[dict[str, object]], rows: list[int]) -> RawBatch:
    """A batch of records whose row numbers are given (not 1, 2, 3...)."""
    batch = RawBatch.from_records(records)
    batch.rows = rows
    return batch


def dotted(record: Mapping[str, object], path: str) -> object:
    """``record["a"]["b"]`` for ``"a.b"``; None where a step is missing or not an object. A
    key that itself contains dots is found whole first."""
    if path in record:
        return record[path]
    value: object = record
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


class Batcher:
    """Records and row errors gathered into batches of ``size`` rows (documents and the
    formats read record by record)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.records: list[dict[str, object]] = []
        self.rows: list[int] = []
        self.errors: list[RowError] = []

    def add(self, row: int, record: dict[str, object]) -> RawBatch | None:
        self.records.append(record)
        self.rows.append(row)
        return self._full()

    def error(self, row: int, message: str, field: str | None = None) -> RawBatch | None:
        self.errors.append(RowError(row, field, message))
        return self._full()

    def _full(self) -> RawBatch | None:
        return self.rest() if len(self.rows) + len(self.errors) >= self.size else None

    def rest(self) -> RawBatch | None:
        """The batch gathered so far (None when empty), and a fresh start."""
        if not self.rows and not self.errors:
            return None
        batch = numbered(self.records, self.rows)
        batch.errors = self.errors
        self.records, self.rows, self.errors = [], [], []
        return batch
