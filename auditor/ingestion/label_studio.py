"""Label Studio: one annotation (or prediction) of one task -> one label row, or why it is skipped.

The shape is Label Studio's JSON export (and its webhook payloads, which carry annotations of
the same shape): a list of tasks, each with ``id``, ``data``, ``annotations`` and
``predictions``; an annotation has ``completed_by`` (the user's integer id, or an object with
``id``), ``created_at``, ``updated_at``, ``was_cancelled``, ``parent_prediction`` and
``result`` entries; a prediction has ``model_version`` and ``result`` (an export made without
them lists prediction ids only). A ``choices`` result carries the label in ``value.choices``.

One mapping for the webhook, ``auditor import`` / ``auditor stats`` and the sync, driven by the
project's Label Studio settings (``LabelStudioOptions``), so the three give the same item,
rater and label for the same annotation:

- item: the task id, or ``data.<key>`` of the task (``item_field``);
- rater: the user's id (``completed_by``, or its ``id`` when it is an object: the webhook only
  ever sends the id, so an export must not name the same person by e-mail);
- label: the one choice of the ``from_name`` control (any single choices control when unset);
- labeled_at: the annotation's ``created_at``; client key ``label-studio:<annotation id>``;
- a prediction is a label of the ``model`` rater named by its ``model_version``, client key
  ``label-studio:prediction:<id>`` (``predictions="ignore"``: predictions are not read and an
  annotation made from one is its annotator's);
- an annotation made from a prediction (``parent_prediction``) and left unchanged is the
  model's answer, not a second judgement: it is skipped, the prediction carries the label; one
  that changed the answer is the annotator's.

Nothing is refused for a setting that does not fit: a cancelled annotation, one without a
choice in the configured control, one with choices in several controls when none is
configured, a task without the item field, all are skipped with a counted reason. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from auditor.errors import Invalid

CANCELLED = "cancelled annotation"
NO_CHOICE = "no choices result"
SEVERAL_CHOICES = "several choices selected in one result"
SEVERAL_CONTROLS = "choices in several controls (set from_name)"
ACCEPTED_PREDICTION = "prediction accepted unchanged (the prediction is the model's label)"
UNSEEN_PREDICTION = "made from a prediction not read yet (the sync reads predictions)"
PREDICTION_IDS = "prediction given by id only (export predictions, or sync with --url)"

PREDICTIONS_MODEL = "model"  # predictions are labels of a model rater
PREDICTIONS_IGNORE = "ignore"  # predictions are not read
PREDICTION_MODES = (PREDICTIONS_MODEL, PREDICTIONS_IGNORE)
UNVERSIONED_MODEL = "model"  # the rater of predictions without a model_version

# Every label from Label Studio carries the client key "label-studio:<annotation id>" (and
# "label-studio:prediction:<id>"), from an export file, the sync and the webhook alike, so the
# routes recognise each other's labels. Other routes may not use the prefix.
KEY_PREFIX = "label-studio:"
PREDICTION_PREFIX = "prediction:"


RESERVED_KEY = (
    f"client keys beginning with {KEY_PREFIX!r} belong to the Label Studio integration (its "
    "webhook, `auditor label-studio sync`, an import of its export): use another key"
)


def reserved_key_rows(rows: list[int], keys: list[str | None] | None) -> list[int]:
    """The rows whose client key uses the Label Studio prefix (refused on other routes: such a
    label would be replaced or removed by the next event or sync of that annotation)."""
    if keys is None:
        return []
    return [row for row, key in zip(rows, keys, strict=True) if key and key.startswith(KEY_PREFIX)]


class LabelStudioFormatError(Invalid):
    """The export as a whole does not have Label Studio's shape."""

    code = "label_studio_format"


@dataclass(frozen=True)
class LabelStudioOptions:
    item_field: str | None = None  # "data.<key>"; None: the task id
    from_name: str | None = None  # the choices control that holds the label; None: the one
    predictions: str = PREDICTIONS_MODEL


@dataclass(frozen=True)
class Mapped:
    """One annotation's outcome: ``record`` (the import format's fields) or ``skipped``
    (a reason), and ``ignored`` results of other types, by type."""

    record: dict[str, object] | None
    skipped: str | None
    ignored: tuple[str, ...] = ()


@dataclass(frozen=True)
class PredictionSeen:
    """What an annotation made from a prediction is compared with: the prediction's model and
    label (None: it has no choice in the configured control)."""

    model_version: str
    label: str | None


def _rater(completed_by: object) -> object:
    if isinstance(completed_by, Mapping):
        return completed_by.get("id")
    return completed_by


def task_item(task: Mapping[str, Any], item_field: str | None) -> object:
    """The item a task stands for (None when the configured data key is missing)."""
    if item_field is None:
        return task.get("id")
    data = task.get("data")
    key = item_field.removeprefix("data.")
    return data.get(key) if isinstance(data, Mapping) else None


def choice(
    results: object, options: LabelStudioOptions
) -> tuple[object | None, str | None, tuple[str, ...]]:
    """(label, None, ignored types) or (None, reason, ignored types) for a ``result`` list:
    the one choice of the configured control (of the only choices control when unset)."""
    entries = [r for r in results if isinstance(r, Mapping)] if isinstance(results, list) else []
    ignored = tuple(str(r.get("type")) for r in entries if r.get("type") != "choices")
    choices = [r for r in entries if r.get("type") == "choices"]
    if options.from_name is not None:
        others = {str(r.get("from_name")) for r in choices} - {options.from_name}
        choices = [r for r in choices if r.get("from_name") == options.from_name]
        if not choices:
            return None, (f"no '{options.from_name}' choice" if others else NO_CHOICE), ignored
    if not choices:
        return None, NO_CHOICE, ignored
    if len({str(r.get("from_name")) for r in choices}) > 1:
        return None, SEVERAL_CONTROLS, ignored
    value = choices[0].get("value")
    picked = value.get("choices") if isinstance(value, Mapping) else None
    if not isinstance(picked, list) or len(picked) != 1 or len(choices) != 1:
        return None, SEVERAL_CHOICES if picked else NO_CHOICE, ignored
    return picked[0], None, ignored


def _mapped(
    task: Mapping[str, Any],
    options: LabelStudioOptions,
    fields: dict[str, object],
    ignored: tuple[str, ...],
) -> Mapped:
    """The record of ``fields`` on the task's item; skipped when the task lacks the item."""
    item = task_item(task, options.item_field)
    if item is None and options.item_field is not None:
        return Mapped(None, f"task without {options.item_field}", ignored)
    record: dict[str, object] = {"item": item}
    record.update((name, value) for name, value in fields.items() if value is not None)
    return Mapped(record, None, ignored)


def annotation_to_row(
    task: Mapping[str, Any],
    annotation: Mapping[str, Any],
    options: LabelStudioOptions,
    prediction: PredictionSeen | None = None,
) -> Mapped:
    """Map one annotation of ``task`` (see the module docstring). ``prediction``: what its
    ``parent_prediction`` said, when it has one and it has been read. Values are passed on as
    found; the import's row checks judge them (a missing rater is reported there)."""
    if annotation.get("was_cancelled"):
        return Mapped(None, CANCELLED)
    label, reason, ignored = choice(annotation.get("result") or [], options)
    if label is None:
        return Mapped(None, reason, ignored)
    from_prediction = annotation.get("parent_prediction") is not None
    if from_prediction and options.predictions == PREDICTIONS_MODEL:
        if prediction is None:
            return Mapped(None, UNSEEN_PREDICTION, ignored)
        if prediction.label == str(label):
            return Mapped(None, ACCEPTED_PREDICTION, ignored)
    ident = annotation.get("id")
    fields = {
        "rater": _rater(annotation.get("completed_by")),
        "label": label,
        "labeled_at": annotation.get("created_at"),
        "key": None if ident is None else f"{KEY_PREFIX}{ident}",
    }
    return _mapped(task, options, fields, ignored)


def model_rater(prediction: Mapping[str, Any]) -> str:
    version = prediction.get("model_version")
    return str(version) if version not in (None, "") else UNVERSIONED_MODEL


def prediction_to_row(
    task: Mapping[str, Any], prediction: Mapping[str, Any], options: LabelStudioOptions
) -> Mapped:
    """Map one prediction of ``task``: a label of the model rater ``model_version``."""
    label, reason, ignored = choice(prediction.get("result") or [], options)
    if label is None:
        return Mapped(None, reason, ignored)
    fields = {
        "rater": model_rater(prediction),
        "label": label,
        "labeled_at": prediction.get("created_at"),
        "rater_kind": "model",
        "key": f"{KEY_PREFIX}{PREDICTION_PREFIX}{prediction.get('id')}",
    }
    return _mapped(task, options, fields, ignored)


def prediction_seen(prediction: Mapping[str, Any], options: LabelStudioOptions) -> PredictionSeen:
    label, _, _ = choice(prediction.get("result") or [], options)
    return PredictionSeen(model_rater(prediction), None if label is None else str(label))


@dataclass(frozen=True)
class Place:
    """Where a record is in an export: the task's position and id, and the annotation's (or
    prediction's)."""

    task_position: int
    task_id: object
    kind: str  # "annotation" or "prediction"
    position: int
    ident: object

    def __str__(self) -> str:
        return (
            f"task {self.task_position} (id {self.task_id}), "
            f"{self.kind} {self.position} (id {self.ident})"
        )


def _tasks(tasks: object) -> list[Mapping[str, Any]]:
    if not isinstance(tasks, list):
        raise LabelStudioFormatError("a Label Studio export is a JSON list of tasks")
    for t, task in enumerate(tasks):
        if not isinstance(task, Mapping) or not isinstance(task.get("annotations", []), list):
            raise LabelStudioFormatError(f"task {t + 1} is not a task object with annotations")
        if not isinstance(task.get("predictions") or [], list):
            raise LabelStudioFormatError(f"task {t + 1}: predictions is not a list")
    return tasks


def export_predictions(tasks: object, options: LabelStudioOptions) -> dict[str, PredictionSeen]:
    """{prediction id: what it said} of every prediction object in an export."""
    seen: dict[str, PredictionSeen] = {}
    for task in _tasks(tasks):
        for prediction in task.get("predictions") or []:
            if isinstance(prediction, Mapping) and prediction.get("id") is not None:
                seen[str(prediction["id"])] = prediction_seen(prediction, options)
    return seen


def export_records(tasks: object, options: LabelStudioOptions) -> Iterator[tuple[Place, Mapped]]:
    """(place, outcome) for every annotation, then every prediction, of each task."""
    predictions = export_predictions(tasks, options)
    for t, task in enumerate(_tasks(tasks)):
        for a, annotation in enumerate(task.get("annotations") or []):
            place = Place(t + 1, task.get("id"), "annotation", a + 1, None)
            if not isinstance(annotation, Mapping):
                raise LabelStudioFormatError(f"{place}: not an object")
            parent = annotation.get("parent_prediction")
            seen = predictions.get(str(parent)) if parent is not None else None
            place = Place(t + 1, task.get("id"), "annotation", a + 1, annotation.get("id"))
            yield place, annotation_to_row(task, annotation, options, seen)
        if options.predictions != PREDICTIONS_MODEL:
            continue
        for p, prediction in enumerate(task.get("predictions") or []):
            ident = prediction.get("id") if isinstance(prediction, Mapping) else prediction
            place = Place(t + 1, task.get("id"), "prediction", p + 1, ident)
            if not isinstance(prediction, Mapping):
                yield place, Mapped(None, PREDICTION_IDS)
                continue
            yield place, prediction_to_row(task, prediction, options)
