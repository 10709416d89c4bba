"""doccano: the JSONL export of a text (or image) classification project.

doccano exports a project whose annotations are not shared ("Share annotations across all
users" off) as a zip with one ``<username>.jsonl`` per member; each line is an example as
``{"id": 7, "text": "...", <its meta keys>, "label": ["positive"], "Comments": []}``
(``filename`` instead of ``text`` for images, ``cats`` for intent detection), with the labels
that member gave it. A shared project exports one ``all.jsonl`` whose labels are every
member's merged, with no rater: it cannot be audited, and is refused with that reason.

rater = the member's file name (``alice.jsonl`` -> ``alice``; a single ``.jsonl`` given with
``--format doccano`` is read as that member's), item = ``id`` (``--item-field`` names another
key), label = the one category; an example the member left unlabeled, one with several
categories (multi-label) and span labels are skipped and counted. doccano keeps no time per
label: labels get the time of the import. Client key ``doccano:<member>:<example id>``, so a
file imported twice writes nothing twice. Rows are numbered across the archive; each error
names its member and line ("alice.jsonl, line 3").
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath
from typing import BinaryIO

from auditor.ingestion.batch import RawBatch
from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.formats.base import Batcher, Source, dotted
from auditor.ingestion.formats.jsonl import objects

UNLABELED = "example not labeled by the member"
SEVERAL = "several categories (multi-label)"
SPANS = "span labels, not categories"
NO_LABEL = "no label field"
COLLABORATIVE = "all"  # the one file of a project whose annotations are shared


def doccano_row(
    example: Mapping[str, object], member: str, item_field: str | None
) -> tuple[dict[str, object] | None, str | None]:
    """(record, None) or (None, the reason it is skipped) for one exported example."""
    labels = example.get("label", example.get("cats"))
    if not isinstance(labels, list):
        return None, NO_LABEL
    if any(isinstance(label, list | dict) for label in labels):
        return None, SPANS
    if len(labels) != 1:
        return None, SEVERAL if labels else UNLABELED
    item = dotted(example, item_field or "id")
    record: dict[str, object] = {"item": item, "rater": member, "label": labels[0]}
    if example.get("id") is not None:
        record["key"] = f"doccano:{member}:{example['id']}"
    return record, None


def _member(name: str, path_name: str) -> str:
    member = PurePosixPath(name).stem
    if member == COLLABORATIVE:
        raise FileFormatError(
            f"{path_name}: {name} is the export of a project with shared annotations: every "
            "member's labels are merged in it, with no rater. Turn off 'Share annotations "
            "across all users' in the project's settings and export again (one file a member)"
        )
    return member


class DoccanoFormat:
    name: str = "doccano"
    extensions: tuple[str, ...] = (".zip",)
    summary: str = "a doccano JSONL export: a zip of <member>.jsonl files, or one of them"

    def batches(self, binary: BinaryIO, source: Source) -> Iterator[RawBatch]:
        batcher = Batcher(source.batch_size)
        row = 0
        for member_name, member, stream in _members(binary, source):
            for line, example, error in objects(stream):
                row += 1
                source.state.places[row] = f"{member_name}, line {line}"
                if example is None:
                    full = batcher.error(row, str(error))
                else:
                    record, skipped = doccano_row(example, member, source.options.item_field)
                    if record is None:
                        source.state.skipped[str(skipped)] += 1
                        continue
                    full = batcher.add(row, record)
                if full is not None:
                    yield full
        if (rest := batcher.rest()) is not None:
            yield rest


def _members(binary: BinaryIO, source: Source) -> Iterator[tuple[str, str, BinaryIO]]:
    """(file name, member, its lines) for a zip's .jsonl files in name order, or the file."""
    if not zipfile.is_zipfile(binary):
        binary.seek(0)
        name = source.path.name
        yield name, _member(name, name), binary
        return
    binary.seek(0)
    with zipfile.ZipFile(binary) as archive:
        names = sorted(n for n in archive.namelist() if n.lower().endswith(".jsonl"))
        if not names:
            raise FileFormatError(f"{source.path.name}: no .jsonl file in the archive")
        members = [(name, _member(name, source.path.name)) for name in names]
        for name, member in members:
            with archive.open(name) as stream:
                yield PurePosixPath(name).name, member, stream  # type: ignore[misc]


FORMAT = DoccanoFormat()
