"""Label Studio webhook events -> what to do with each annotation (pure).

As Label Studio 1.23 sends them (``tests/fixtures`` and ../shared/fixtures hold real bodies):
every event has ``action``; ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` carry one
``annotation`` and its ``task`` object; ``ANNOTATIONS_CREATED`` (the bulk action, e.g.
"Create Annotations From Predictions") carries a list under ``annotation`` and the tasks as a
list under ``task``; ``ANNOTATIONS_DELETED`` carries ``annotations: [{"id": ...}]``;
``TASKS_DELETED`` carries ``tasks: [{"id": ...}]`` (and nothing about their annotations).
Annotations have ``id``, ``task`` (the task id), ``completed_by``, ``result``,
``was_cancelled``, ``created_at``, ``updated_at`` and ``parent_prediction``. Each is mapped by
``auditor.ingestion.label_studio.annotation_to_row``, the code of ``auditor import --format
label-studio`` and of the sync, so every route gives the same label.

An annotation's version is its ``updated_at`` (else ``created_at``): the receiver keeps the
newest version it has seen and a deletion for ever, so events may arrive late, twice or out of
order and still end in the right labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from auditor.errors import Invalid
from auditor.ingestion.label_studio import (
    LabelStudioOptions,
    Mapped,
    PredictionSeen,
    annotation_to_row,
)

CREATED = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED")
UPDATED = ("ANNOTATION_UPDATED",)
DELETED = ("ANNOTATION_DELETED", "ANNOTATIONS_DELETED")
TASKS_DELETED = "TASKS_DELETED"
HANDLED = (*CREATED, *UPDATED, *DELETED, TASKS_DELETED)
# the label's client key is "label-studio:<id>", at most 200 characters
MAX_ID_LENGTH = 180


class EventError(Invalid):
    """The event does not have Label Studio's shape; the message names the field."""

    code = "label_studio_event"


@dataclass(frozen=True)
class Upsert:
    annotation_id: str
    version: int  # microseconds since the epoch of updated_at (else created_at); 0 if none
    mapped: Mapped
    task_id: str | None = None


@dataclass(frozen=True)
class Delete:
    annotation_id: str


@dataclass(frozen=True)
class DeleteTasks:
    """Tasks deleted in Label Studio: every annotation and prediction of them goes."""

    task_ids: tuple[str, ...]


Operation = Upsert | Delete | DeleteTasks


def _ident(entry: object, what: str, position: int) -> str:
    if not isinstance(entry, Mapping) or entry.get("id") is None:
        raise EventError(f"{what} {position}: an object with an 'id' is required")
    ident = entry["id"]
    if isinstance(ident, bool) or not isinstance(ident, int | str) or not str(ident):
        raise EventError(f"{what} {position}: 'id' must be an integer or a string")
    if len(str(ident)) > MAX_ID_LENGTH:
        raise EventError(f"{what} {position}: 'id' is longer than {MAX_ID_LENGTH}")
    return str(ident)


def _entries(found: object) -> list[Any]:
    if found is None:
        return []
    return found if isinstance(found, list) else [found]


def _annotations(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = _entries(payload.get("annotation", payload.get("annotations")))
    for position, entry in enumerate(entries):
        _ident(entry, "annotation", position + 1)
    return entries  # an annotation event without annotations changes nothing


def version_of(record: Mapping[str, Any]) -> int:
    """``updated_at`` (else ``created_at``) in microseconds since the epoch; 0 if neither."""
    stamp = record.get("updated_at") or record.get("created_at")
    if not isinstance(stamp, str):
        return 0
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1_000_000)
    except (ValueError, OverflowError):
        raise EventError(f"annotation {record.get('id')}: bad updated_at {stamp!r}") from None


def _task(payload: Mapping[str, Any], annotation: Mapping[str, Any]) -> Mapping[str, Any]:
    """The annotation's task: the event's task object with its id (``task`` is one object, or
    a list for the bulk action; ``tasks`` a list), else ``{"id": annotation.task}``."""
    task_id = annotation.get("task")
    if isinstance(task_id, Mapping):
        return task_id
    candidates = [*_entries(payload.get("task")), *_entries(payload.get("tasks"))]
    for task in candidates:
        if isinstance(task, Mapping) and (task_id is None or task.get("id") == task_id):
            return task
    return {"id": task_id}


def action_of(payload: object) -> str:
    if not isinstance(payload, Mapping) or not isinstance(payload.get("action"), str):
        raise EventError("a Label Studio event is a JSON object with an 'action'")
    return str(payload["action"])


def parent_predictions(payload: object) -> set[str]:
    """The ids of the predictions the event's annotations were made from."""
    if action_of(payload) not in (*CREATED, *UPDATED):
        return set()
    assert isinstance(payload, Mapping)
    return {
        str(a["parent_prediction"])
        for a in _annotations(payload)
        if a.get("parent_prediction") is not None
    }


def operations(
    payload: object,
    options: LabelStudioOptions | None = None,
    predictions: Mapping[str, PredictionSeen] | None = None,
) -> list[Operation] | None:
    """The operations of one event, in order; None for an action this receiver ignores.
    ``predictions``: what the predictions of ``parent_predictions(payload)`` said, where
    known."""
    action = action_of(payload)
    if action not in HANDLED:
        return None
    assert isinstance(payload, Mapping)
    if action == TASKS_DELETED:
        tasks = _entries(payload.get("tasks"))
        return [DeleteTasks(tuple(_ident(t, "task", i + 1) for i, t in enumerate(tasks)))]
    entries = _annotations(payload)
    if action in DELETED:
        return [Delete(str(entry["id"])) for entry in entries]
    options = options or LabelStudioOptions()
    known = predictions or {}
    ops: list[Operation] = []
    for a in entries:
        task = _task(payload, a)
        parent = a.get("parent_prediction")
        seen = known.get(str(parent)) if parent is not None else None
        task_id = None if task.get("id") is None else str(task.get("id"))
        mapped = annotation_to_row(task, a, options, seen)
        ops.append(Upsert(str(a["id"]), version_of(a), mapped, task_id))
    return ops
