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
    ) -> None:
        self.path = path
        self.plugin = find_format(path, file_format)
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
        with self.path.open("rb") as binary:
            self._binary = binary
            yield from self.plugin.batches(binary, self.source)
