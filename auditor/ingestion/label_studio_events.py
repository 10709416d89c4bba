"""Label Studio webhook events -> what to do with each annotation (pure).

Label Studio's webhook reference: every event has ``action``; annotation events carry
``annotation`` (one object; a list, or ``annotations``, for the bulk action) with ``id``,
``task`` (the task id), ``completed_by``, ``result``, ``was_cancelled``, ``created_at``,
``updated_at``, and the ``task`` object when Label Studio sends it; deletions carry
``annotations: [{"id": ...}]`` (or ``annotation``). Each annotation is mapped by
``auditor.ingestion.label_studio.annotation_to_row``, the code of ``auditor import --format
label-studio``, so a webhook and an export give the same label.

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
    LabelStudioFormatError,
    LabelStudioOptions,
    Mapped,
    annotation_to_row,
)

CREATED = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED")
UPDATED = ("ANNOTATION_UPDATED",)
DELETED = ("ANNOTATION_DELETED", "ANNOTATIONS_DELETED")
HANDLED = CREATED + UPDATED + DELETED
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


@dataclass(frozen=True)
class Delete:
    annotation_id: str


def _annotations(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = payload.get("annotation", payload.get("annotations"))
    if found is None:
        return []  # an annotation event without annotations changes nothing
    entries = found if isinstance(found, list) else [found]
    for position, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or entry.get("id") is None:
            raise EventError(f"annotation {position + 1}: an object with an 'id' is required")
        ident = entry["id"]
        if isinstance(ident, bool) or not isinstance(ident, int | str) or not str(ident):
            raise EventError(f"annotation {position + 1}: 'id' must be an integer or a string")
        if len(str(ident)) > MAX_ID_LENGTH:
            raise EventError(f"annotation {position + 1}: 'id' is longer than {MAX_ID_LENGTH}")
    return entries  # type: ignore[return-value]


def _version(annotation: Mapping[str, Any]) -> int:
    stamp = annotation.get("updated_at") or annotation.get("created_at")
    if not isinstance(stamp, str):
        return 0
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1_000_000)
    except (ValueError, OverflowError):
        raise EventError(f"annotation {annotation.get('id')}: bad updated_at {stamp!r}") from None


def _task(payload: Mapping[str, Any], annotation: Mapping[str, Any]) -> Mapping[str, Any]:
    """The annotation's task: the event's ``task`` (or ``tasks``) object with its id, else
    ``{"id": annotation.task}``."""
    task_id = annotation.get("task")
    if isinstance(task_id, Mapping):
        return task_id
    tasks = payload.get("tasks")
    candidates = [payload.get("task"), *(tasks if isinstance(tasks, list) else [])]
    for task in candidates:
        if isinstance(task, Mapping) and (task_id is None or task.get("id") == task_id):
            return task
    return {"id": task_id}


def operations(
    payload: object, options: LabelStudioOptions | None = None
) -> list[Upsert | Delete] | None:
    """The operations of one event, in order; None for an action this receiver ignores."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("action"), str):
        raise EventError("a Label Studio event is a JSON object with an 'action'")
    action = payload["action"]
    if action not in HANDLED:
        return None
    entries = _annotations(payload)
    if action in DELETED:
        return [Delete(str(entry["id"])) for entry in entries]
    options = options or LabelStudioOptions()
    try:
        return [
            Upsert(str(a["id"]), _version(a), annotation_to_row(_task(payload, a), a, options))
            for a in entries
        ]
    except LabelStudioFormatError as error:
        raise EventError(str(error)) from None
