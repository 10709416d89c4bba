"""Streaming readers of label files: the format's plugin (``auditor.ingestion.formats``) reads
the file, this module opens it, picks the format and keeps what the read left out.

All yield batches of at most ``batch_size`` rows, so memory stays bounded whatever the file
size (a Label Studio export is one JSON document, read whole). Row numbers are file lines for
line formats (the CSV header is line 1), the numbers a person sees in an editor; in a document
a row is the n-th record, and ``where(row)`` names its place in the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from auditor.ingestion.batch import FIELDS, AnyBatch
from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.formats import FORMATS, find_format
from auditor.ingestion.formats.base import ReadOptions, Source
from auditor.ingestion.formats.delimited import sniff_delimiter

__all__ = [
    "FORMATS",
    "LabelFileReader",
    "ReadOptions",
    "detect_format",
    "parse_delimiter",
    "parse_mapping",
    "sniff_delimiter",
]

DELIMITERS = {",": ",", "\t": "\t", "tab": "\t", ";": ";", "|": "|", "pipe": "|"}


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


# What a binary file starts with, for the message (issue 27: a PNG's bytes were printed as
# its "columns").
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one: save it as CSV)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel or Office file (save it as CSV)"),
    (b"\x1f\x8b", "a gzip archive (decompress it first)"),
    (b"SQLite format 3", "an SQLite database"),
)


def refuse_binary(path: Path) -> None:
    """FileFormatError when ``path`` is not a text file: it starts like a known binary format
    or more than 1% of its first 8 KiB are NUL bytes (UTF-16 text is named as such)."""
    try:
        with path.open("rb") as binary:
            head = binary.read(8192)
    except OSError:
        return  # the reader reports it
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise FileFormatError(
            f"{path.name} is UTF-16 text: save it as UTF-8 (CSV UTF-8 in Excel) and import that"
        )
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    if kind is None and head.count(b"\x00") <= len(head) // 100:
        # A stray NUL in a text file is a bad value the row check names (row, field, U+0000);
        # binary data without a known signature is NULs in a share no text export has.
        return
    raise FileFormatError(
        f"{path.name} is not a text file ({kind or 'binary data'}): import a CSV, TSV, JSONL "
        "or JSON export of the labels"
    )


def detect_format(path: Path) -> str:
    """The name of the format that claims ``path``'s extension (FileFormatError if none)."""
    return find_format(path).name


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
        refuse_empty: bool = False,
    ) -> None:
        self.path = path
        self.plugin = find_format(path, file_format)
        if ".zip" not in self.plugin.extensions:
            refuse_binary(path)
        self.refuse_empty = refuse_empty
        self.format = self.plugin.name
        self.source = Source(path, batch_size, options or ReadOptions(), columnar)
        self.size = path.stat().st_size
        self._binary: BinaryIO | None = None

    @property
    def options(self) -> ReadOptions:
        return self.source.options

    # What the read left out, known once the header (or the file) is read.
    @property
    def ignored_columns(self) -> list[str]:
        return self.source.state.ignored_columns

    @property
    def skipped(self) -> Counter[str]:
        return self.source.state.skipped

    @property
    def ignored_results(self) -> Counter[str]:
        return self.source.state.ignored_results

    @property
    def delimiter(self) -> str | None:
        return self.source.state.delimiter

    def where(self, row: int) -> str:
        """Where row ``row`` is: its place in a document, else "row N" (a file line)."""
        place = self.source.state.places.get(row)
        return f"row {row}" if place is None else f"row {row} ({place})"

    @property
    def position(self) -> int:
        if self._binary is None or self._binary.closed:
            return self.size
        return self._binary.tell()

    def __iter__(self) -> Iterator[AnyBatch]:
        rows = 0
        with self.path.open("rb") as binary:
            self._binary = binary
            for batch in self.plugin.batches(binary, self.source):
                rows += len(batch)
                yield batch
        if rows == 0 and self.delimiter and self.refuse_empty:
            # a CSV/TSV header and nothing else: refused before anything is recorded (issue 27)
            raise FileFormatError(
                f"{self.path.name} has a header line but no rows: nothing to import, and no "
                "import was recorded (export the labels again, with their rows)"
            )
