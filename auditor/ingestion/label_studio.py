"""Label Studio: one annotation of one task -> one label row, or the reason it is skipped.

The shape is Label Studio's JSON export (and its webhook payloads, which carry one ``task``
and one ``annotation`` of the same shape): a list of tasks, each with ``id``, ``data`` and
``annotations``; an annotation has ``completed_by`` (an integer user id, or an object with
``id`` and ``email``), ``created_at`` (ISO 8601), ``was_cancelled`` and ``result`` entries.
A ``choices`` result carries the label in ``value.choices``.

Rules: item = the task id, or ``data.<key>`` of the task (``item_field``); rater = the email
when given, else the user id; labeled_at = the annotation's ``created_at``; one label per
annotation, from the one ``choices`` control (``from_name`` picks it when there are several).
Cancelled annotations, results of other types, and annotations without a single choice are
skipped with a counted reason. Two annotations of one task by one user are two looks (two
labels), as they are two judgements. Pure: no I/O, so the webhook receiver can reuse it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from auditor.errors import Invalid

CANCELLED = "cancelled annotation"
NO_CHOICE = "no choices result"
SEVERAL_CHOICES = "several choices selected in one result"


class LabelStudioFormatError(Invalid):
    """The export as a whole does not have Label Studio's shape."""

    code = "label_studio_format"


@dataclass(frozen=True)
class LabelStudioOptions:
    item_field: str | None = None  # "data.<key>"; None: the task id
    from_name: str | None = None  # the choices control to read when there are several


@dataclass(frozen=True)
class Mapped:
    """One annotation's outcome: ``record`` (the import format's fields) or ``skipped``
    (a reason), and ``ignored`` results of other types, by type."""

    record: dict[str, object] | None
    skipped: str | None
    ignored: tuple[str, ...] = ()


def _rater(completed_by: object) -> object:
    if isinstance(completed_by, Mapping):
        email = completed_by.get("email")
        return email if isinstance(email, str) and email.strip() else completed_by.get("id")
    return completed_by


def _item(task: Mapping[str, Any], item_field: str | None) -> object:
    if item_field is None:
        return task.get("id")
    data = task.get("data")
    key = item_field.removeprefix("data.")
    return data.get(key) if isinstance(data, Mapping) else None


# Every label from Label Studio carries the client key "label-studio:<annotation id>", from an
# export file and from the webhook alike, so the two routes recognise each other's labels (a
# file imported after the webhook stored its annotations writes nothing again).
KEY_PREFIX = "label-studio:"


def annotation_to_row(
    task: Mapping[str, Any], annotation: Mapping[str, Any], options: LabelStudioOptions
) -> Mapped:
    """Map one annotation of ``task`` (see the module docstring). Values are passed on as
    found; the import's row checks judge them (a missing rater is reported there)."""
    if annotation.get("was_cancelled"):
        return Mapped(None, CANCELLED)
    results = annotation.get("result") or []
    choices = [r for r in results if isinstance(r, Mapping) and r.get("type") == "choices"]
    ignored = tuple(
        str(r.get("type")) for r in results if isinstance(r, Mapping) and r.get("type") != "choices"
    )
    if options.from_name is not None:
        choices = [r for r in choices if r.get("from_name") == options.from_name]
    if not choices:
        return Mapped(None, NO_CHOICE, ignored)
    controls = sorted({str(r.get("from_name")) for r in choices})
    if len(controls) > 1:
        raise LabelStudioFormatError(
            f"several choices controls ({', '.join(controls)}): pick one with --from-name"
        )
    value = choices[0].get("value")
    picked = value.get("choices") if isinstance(value, Mapping) else None
    if not isinstance(picked, list) or len(picked) != 1 or len(choices) != 1:
        return Mapped(None, SEVERAL_CHOICES if picked else NO_CHOICE, ignored)
    record: dict[str, object] = {
        "item": _item(task, options.item_field),
        "rater": _rater(annotation.get("completed_by")),
        "label": picked[0],
    }
    if annotation.get("created_at") is not None:
        record["labeled_at"] = annotation.get("created_at")
    if annotation.get("id") is not None:
        record["key"] = f"{KEY_PREFIX}{annotation['id']}"
    return Mapped(record, None, ignored)


def export_annotations(
    tasks: object, options: LabelStudioOptions
) -> Iterator[tuple[int, int, Mapped]]:
    """(task position, annotation position, outcome) for every annotation of an export."""
    if not isinstance(tasks, list):
        raise LabelStudioFormatError("a Label Studio export is a JSON list of tasks")
    for t, task in enumerate(tasks):
        if not isinstance(task, Mapping) or not isinstance(task.get("annotations", []), list):
            raise LabelStudioFormatError(f"task {t + 1} is not a task object with annotations")
        for a, annotation in enumerate(task.get("annotations") or []):
            if not isinstance(annotation, Mapping):
                raise LabelStudioFormatError(f"task {t + 1}, annotation {a + 1}: not an object")
            yield t, a, annotation_to_row(task, annotation, options)
