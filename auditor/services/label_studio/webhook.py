"""Label Studio, live: apply one webhook event to a project in one transaction.

- created: one label per annotation (mapped with the project's Label Studio settings, as
  ``auditor import`` and the sync map it);
- a replay, or an event older than the version stored, writes nothing;
- updated: the annotation's label is replaced (a new label id: the next recompute sees it);
- deleted: its label is removed, and later events for it are ignored;
- tasks deleted: the labels of every annotation and prediction of those tasks are removed;
- cancelled annotations, annotations without a choice in the configured control, and those
  made from a prediction and left unchanged are counted, not stored; results of other types
  are counted by type.

An annotation made from a prediction is compared with that prediction, which Label Studio's
event does not carry: it is read from what the sync stored, else from Label Studio's API when
the project's settings give its URL and a token (before the transaction: nothing waits on the
network while holding the project's lock), and the prediction then becomes the model's label.
Events of one project are applied one at a time (a lock on its row), each in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from auditor.connectors.label_studio import LabelStudioUnavailable
from auditor.errors import Invalid, shown_name
from auditor.ingestion.label_studio import (
    PREDICTION_PREFIX,
    PREDICTIONS_MODEL,
    LabelStudioOptions,
    PredictionSeen,
    prediction_seen,
    prediction_to_row,
)
from auditor.ingestion.label_studio_events import (
    Delete,
    DeleteTasks,
    EventError,
    Upsert,
    action_of,
    operations,
    parent_predictions,
    version_of,
)
from auditor.services.ingest.labels import with_race_retries
from auditor.services.label_studio.apply import WEBHOOK_SOURCE, Applier, Change
from auditor.services.label_studio.settings import api_of, options_of
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)


def receive_event(uow: UnitOfWork, slug: str, payload: object) -> dict[str, Any]:
    """Apply one event; the counts of what happened (``{"ignored": action}`` for an action
    this receiver does not handle). A malformed event or a bad label raises and writes
    nothing."""
    try:
        action = action_of(payload)
        parents = parent_predictions(payload)
        if operations(payload) is None:  # shape checked, and nothing to do
            # the action echoed as data only when short and printable: never more than a
            # short escaped excerpt of what a client sent
            return {"ignored": shown_name(action)}
    except EventError as error:
        raise Invalid(f"Label Studio event: {error}") from None
    predictions: dict[str, PredictionSeen] = {}
    fetched: list[Change] = []
    if parents:  # what the predictions said: stored ones, else read from Label Studio
        with uow.reader() as reader:
            project = reader.require_project(slug)
            record = reader.label_studio_settings.get(project.id)
            wanted = [PREDICTION_PREFIX + p for p in parents]
            known = reader.label_studio.find(project.id, wanted)
        predictions = {
            ident.removeprefix(PREDICTION_PREFIX): PredictionSeen(s.model_version or "", s.label)
            for ident, s in known.items()
            if s.model_version is not None and not s.deleted
        }
        options = options_of(record)
        if options.predictions == PREDICTIONS_MODEL:
            fetched = _fetch(record, options, parents - set(predictions), predictions)
    return with_race_retries(lambda: _apply(uow, slug, payload, predictions, fetched, action))


def _fetch(
    record: object,
    options: LabelStudioOptions,
    missing: set[str],
    predictions: dict[str, PredictionSeen],
) -> list[Change]:
    """Read the predictions not seen yet from Label Studio's API (when configured): fills
    ``predictions``, and returns them as model labels to store."""
    api = api_of(record)  # type: ignore[arg-type]
    changes: list[Change] = []
    if api is None:
        return changes
    for ident in sorted(missing):
        try:
            prediction = api.prediction(ident)
        except LabelStudioUnavailable as error:
            log.warning("prediction %s not read from Label Studio: %s", ident, error)
            continue
        seen = prediction_seen(prediction, options)
        predictions[ident] = seen
        task_id = prediction.get("task")
        task = {"id": task_id}
        if options.item_field is not None:
            try:
                task = api.task(str(task_id))
            except LabelStudioUnavailable as error:
                log.warning("task %s not read from Label Studio: %s", task_id, error)
        changes.append(prediction_change(task, prediction, options))
    return changes


def prediction_change(
    task: Mapping[str, Any], prediction: Mapping[str, Any], options: LabelStudioOptions
) -> Change:
    seen = prediction_seen(prediction, options)
    return Change(
        PREDICTION_PREFIX + str(prediction.get("id")),
        version_of(prediction),
        prediction_to_row(task, prediction, options),
        None if task.get("id") is None else str(task.get("id")),
        seen.model_version,
        seen.label,
    )


def _apply(
    uow: UnitOfWork,
    slug: str,
    payload: object,
    predictions: dict[str, PredictionSeen],
    fetched: list[Change],
    action: str,
) -> dict[str, Any]:
    with uow:
        project = uow.require_project(slug, for_update=True)
        # mapped here, with the settings as they are under the project's lock
        options = options_of(uow.label_studio_settings.get(project.id))
        try:
            ops = operations(payload, options, predictions) or []
        except EventError as error:
            raise Invalid(f"Label Studio event: {error}") from None
        applier = Applier(uow, project, WEBHOOK_SOURCE)
        applier.load(
            [c.ident for c in fetched]
            + [op.annotation_id for op in ops if isinstance(op, Upsert | Delete)]
        )
        for change in fetched:
            applier.upsert(change)
        applier.counts.clear()  # the counts are of the event's own annotations
        for op in ops:
            if isinstance(op, Upsert):
                applier.upsert(Change(op.annotation_id, op.version, op.mapped, op.task_id))
            elif isinstance(op, Delete):
                applier.delete(op.annotation_id)
            else:
                _delete_tasks(uow, applier, op)
        stored, removed = applier.finish()
        uow.commit()
    counts = applier.counts
    answer: dict[str, Any] = {
        "action": action,
        "stored": stored,
        "replaced": counts["replaced"],
        "deleted": counts["deleted"],
        "labels_removed": removed,
        "duplicates": counts["duplicates"],
        "after_delete": counts["after_delete"],
        "skipped": dict(applier.skipped),
        "ignored_results": dict(applier.ignored),
    }
    if fetched:
        answer["predictions_read"] = len(fetched)
    return answer


def _delete_tasks(uow: UnitOfWork, applier: Applier, op: DeleteTasks) -> None:
    """Every record of the tasks goes; labels stored before tasks were remembered (no
    task id) are found by their item when the item is the task id."""
    records = uow.label_studio.of_tasks(applier.project.id, op.task_ids)
    applier.seen.update(records)
    for ident in sorted(records):
        applier.delete(ident)
    record = uow.label_studio_settings.get(applier.project.id)
    if options_of(record).item_field is None:
        for key in uow.label_studio.keys_on_items(applier.project.id, op.task_ids):
            ident = key.removeprefix("label-studio:")
            if ident not in records:
                applier.unlabel.add(key)
                applier.counts["deleted"] += 1
    applier.counts["tasks_deleted"] += len(op.task_ids)
