"""Label Studio's JSON export: a list of tasks with their annotations and predictions.

Mapped by ``auditor.ingestion.label_studio`` (the webhook's and the sync's mapping) with the
options of ``--item-field`` and ``--from-name`` (for a project: its Label Studio settings).
The document is read whole. A row is the n-th annotation or prediction of the file; its place
("task 12 (id 701), annotation 2 (id 33)") goes with every error about it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import BinaryIO

from auditor.ingestion.batch import RawBatch
from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.formats.base import Batcher, Source
from auditor.ingestion.label_studio import LabelStudioFormatError, export_records


class LabelStudioFormat:
    name: str = "label-studio"
    extensions: tuple[str, ...] = (".json",)
    summary: str = "a Label Studio JSON export (annotations, and predictions as model raters)"

    def batches(self, binary: BinaryIO, source: Source) -> Iterator[RawBatch]:
        state = source.state
        try:
            tasks = json.loads(binary.read().decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as error:
            raise FileFormatError(f"{source.path.name}: not a JSON document: {error}") from None
        batcher = Batcher(source.batch_size)
        row = 0
        try:
            for place, mapped in export_records(tasks, source.options.label_studio):
                row += 1
                state.ignored_results.update(mapped.ignored)
                if mapped.record is None:
                    state.skipped[str(mapped.skipped)] += 1
                    continue
                state.places[row] = str(place)
                if (full := batcher.add(row, mapped.record)) is not None:
                    yield full
        except LabelStudioFormatError as error:
            raise FileFormatError(f"{source.path.name}: {error}") from None
        if (rest := batcher.rest()) is not None:
            yield rest


FORMAT = LabelStudioFormat()
