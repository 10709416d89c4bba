"""Prodigy: the JSONL of ``prodigy db-out DATASET``, one answered task a line.

Prodigy writes each task as it was shown, with the answer and its own bookkeeping:
``answer`` ("accept", "reject" or "ignore"), ``_annotator_id`` (``<dataset>-<session name>``
with named multi-user sessions), ``_session_id``, ``_input_hash`` (same input, same hash),
``_task_hash`` (input and question), ``_timestamp`` (Unix seconds) and ``_view_id``.

- A choice task (``options`` with ``accept``, the ``choice`` interface): the label is the one
  accepted option's ``id``; the item is the input (``_input_hash``). Several accepted options,
  none, or a rejected task are skipped with a counted reason.
- A binary task (a ``label`` question and no ``options``, as ``textcat.teach`` or the
  ``classification`` interface): the label is the answer, ``accept`` or ``reject``; the item
  is the question (``_task_hash``: this input with this label).
- ``ignore`` answers and tasks of other interfaces (spans, boxes...) are skipped and counted.

rater = ``_annotator_id`` (else ``_session_id``), session = ``_session_id``, labeled_at =
``_timestamp``, client key ``prodigy:<annotator>:<task hash>:<timestamp>`` (a file imported
twice writes nothing twice). ``--item-field`` names another key of the task for the item
(dotted for nested ones, e.g. ``meta.case_id``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import BinaryIO

from auditor.ingestion.batch import RawBatch
from auditor.ingestion.formats.base import Batcher, Source, dotted
from auditor.ingestion.formats.jsonl import objects

IGNORED = "answer 'ignore'"
NO_ANSWER = "no answer"
REJECTED_CHOICE = "choice task rejected"
NO_OPTION = "no option accepted"
SEVERAL_OPTIONS = "several options accepted"


def _other_view(task: Mapping[str, object]) -> str:
    return f"neither a choice nor a binary label (interface {task.get('_view_id')!r})"


def _when(stamp: object) -> object:
    """``_timestamp`` (Unix seconds) as ISO 8601; anything else passed on for the row checks."""
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        try:
            return datetime.fromtimestamp(stamp, UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return str(stamp)
    return stamp


def prodigy_row(
    task: Mapping[str, object], item_field: str | None
) -> tuple[dict[str, object] | None, str | None]:
    """(record, None) or (None, the reason it is skipped) for one task (module docstring)."""
    answer = task.get("answer")
    if answer == "ignore":
        return None, IGNORED
    if answer not in ("accept", "reject"):
        return None, NO_ANSWER
    options = task.get("options")
    if isinstance(options, list):
        if answer == "reject":
            return None, REJECTED_CHOICE
        accepted = task.get("accept")
        picked = accepted if isinstance(accepted, list) else []
        if len(picked) != 1:
            return None, SEVERAL_OPTIONS if picked else NO_OPTION
        label, default_item = picked[0], "_input_hash"
    elif isinstance(task.get("label"), str):
        label, default_item = answer, "_task_hash"
    else:
        return None, _other_view(task)
    rater = task.get("_annotator_id", task.get("_session_id"))
    stamp = task.get("_timestamp")
    record: dict[str, object] = {
        "item": dotted(task, item_field or default_item),
        "rater": rater,
        "label": label,
    }
    if task.get("_session_id") is not None:
        record["session"] = task["_session_id"]
    if stamp is not None:
        record["labeled_at"] = _when(stamp)
    if rater is not None:
        suffix = "" if stamp is None else f":{stamp}"
        record["key"] = f"prodigy:{rater}:{task.get('_task_hash')}{suffix}"
    return record, None


class ProdigyFormat:
    name: str = "prodigy"
    extensions: tuple[str, ...] = ()  # a .jsonl: give --format prodigy
    summary: str = "Prodigy db-out JSONL (choice tasks and binary accept/reject answers)"

    def batches(self, binary: BinaryIO, source: Source) -> Iterator[RawBatch]:
        batcher = Batcher(source.batch_size)
        for line, task, error in objects(binary):
            if task is None:
                full = batcher.error(line, str(error))
            else:
                record, skipped = prodigy_row(task, source.options.item_field)
                if record is None:
                    source.state.skipped[str(skipped)] += 1
                    continue
                full = batcher.add(line, record)
            if full is not None:
                yield full
        if (rest := batcher.rest()) is not None:
            yield rest


FORMAT = ProdigyFormat()
