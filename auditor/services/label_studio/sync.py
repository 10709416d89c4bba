"""The sync: make a project's Label Studio labels equal to Label Studio's annotations now.

Label Studio posts each webhook event once and never retries, so an outage of auditor, a
refused key or a bad event loses changes. The sync reads Label Studio's whole state (an export
file, or its API: the export plus every prediction) and, in one transaction under the
project's lock (the webhook's too):

- creates the labels that are missing, replaces those whose content differs (an edit missed,
  or settings changed since they were stored), removes those Label Studio no longer has;
- never brings back an annotation the webhook saw deleted (a deletion is kept for ever), and
  never replaces a label with an older version of it (a stale export file loses to the
  webhook);
- keeps a label the export cannot know about: stored with a version newer than anything in
  the export (created after the export was taken);
- counts what it did, and what it skipped (by reason), like an import.

A second run with nothing new changes nothing. A label that the row checks refuse (a choice
that is not a category of the project) refuses the whole sync, naming its task and
annotation, and writes nothing: the same label would have been refused by the webhook.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from auditor.connectors.label_studio import LabelStudioApi, tasks_with_predictions
from auditor.errors import Invalid
from auditor.ingestion.batch import RawBatch, validate_batch
from auditor.ingestion.errors import IngestRejected, RowError
from auditor.ingestion.label_studio import (
    KEY_PREFIX,
    PREDICTION_PREFIX,
    LabelStudioFormatError,
    LabelStudioOptions,
    Place,
    export_predictions,
    export_records,
)
from auditor.ingestion.label_studio_events import EventError, version_of
from auditor.services.ingest.batch_writer import category_ids_of
from auditor.services.label_studio.apply import SYNC_SOURCE, Applier, Change
from auditor.services.label_studio.repeats import REPEAT_PREFIX
from auditor.services.label_studio.settings import api_of, options_of
from auditor.storage.label_studio_repository import StoredLabel
from auditor.storage.project_repository import ProjectRecord
from auditor.storage.unit_of_work import UnitOfWork


@dataclass
class SyncResult:
    project: str
    tasks: int = 0
    annotations: int = 0
    predictions: int = 0
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    kept_newer: int = 0  # stored labels newer than the export
    deleted_earlier: int = 0  # in the export, but the webhook saw them deleted since
    skipped: dict[str, int] = field(default_factory=dict)
    ignored_results: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        skipped = sum(self.skipped.values())
        return (
            f"{self.created} created, {self.updated} updated, {self.deleted} deleted, "
            f"{self.unchanged} unchanged, {skipped} skipped"
        )


def fetch_state(api: LabelStudioApi, ls_project: int) -> list[Any]:
    """Label Studio's tasks now, with their annotations and predictions (two API calls)."""
    return tasks_with_predictions(api.export(ls_project), api.predictions(ls_project))


def sync_from_api(
    uow: UnitOfWork,
    slug: str,
    *,
    url: str | None = None,
    token: str | None = None,
    ls_project: int | None = None,
) -> SyncResult:
    """Sync from Label Studio's API: the given URL, token and project, else the project's
    settings'. The state is read before the transaction (no lock is held on the network)."""
    with uow.reader() as reader:
        record = reader.label_studio_settings.get(reader.require_project(slug).id)
    api = api_of(record)
    if url or token or ls_project is not None:
        missing = [n for n, v in (("--url", url), ("--token", token), ("--ls-project", ls_project))
                   if not v]  # fmt: skip
        if missing:
            raise Invalid(f"give {', '.join(missing)} too (or none, to use the settings)")
        api = LabelStudioApi(str(url), str(token))
        target = int(ls_project)  # type: ignore[arg-type]
    elif api is None or record is None or record.ls_project is None:
        raise Invalid(
            f"project {slug!r} has no Label Studio URL, token and project in its settings: "
            "give --url, --token and --ls-project, or --export FILE"
        )
    else:
        target = record.ls_project
    return sync_project(uow, slug, fetch_state(api, target))


def sync_project(
    uow: UnitOfWork, slug: str, tasks: object, *, now: datetime | None = None
) -> SyncResult:
    """Make ``slug``'s Label Studio labels equal to ``tasks`` (an export: see the module
    docstring). Raises ``Invalid`` for a document that is not an export and
    ``IngestRejected`` (naming task and annotation) for a label the row checks refuse."""
    result = SyncResult(slug)
    with uow:
        project = uow.require_project(slug, for_update=True)
        options = options_of(uow.label_studio_settings.get(project.id))
        changes, places, watermark = _changes(tasks, options, result)
        wanted = _normalised(uow, project, changes, places)
        applier = Applier(uow, project, SYNC_SOURCE)
        applier.seen = uow.label_studio.all_seen(project.id)
        stored = uow.label_studio.stored_labels(project.id)
        for change in changes:
            _compare(applier, change, stored.get(KEY_PREFIX + change.ident), wanted, result)
        present = {change.ident for change in changes}
        for key in sorted(stored):
            ident = key.removeprefix(KEY_PREFIX)
            if ident in present:
                continue
            current = applier.seen.get(ident)
            if current is not None and not current.deleted and current.version > watermark:
                result.kept_newer += 1
                continue
            applier.delete(ident, remember=current is not None and current.deleted)
            result.deleted += 1
        for ident, current in applier.seen.items():
            # records remembered without a label (skipped ones) that are gone: forget them
            if ident.startswith(REPEAT_PREFIX):
                continue  # a task made for a hidden repeat (services.label_studio.repeats)
            gone = ident not in present and KEY_PREFIX + ident not in stored
            if gone and not current.deleted and current.version <= watermark:
                applier.delete(ident, remember=False)
        applier.finish()
        result.skipped = dict(applier.skipped)
        result.ignored_results = dict(applier.ignored)
        at = now or datetime.now(UTC)
        uow.label_studio_settings.recovered(project.id)
        if uow.label_studio_settings.get(project.id) is not None:
            uow.label_studio_settings.synced(project.id, at, "ok: " + result.summary())
        uow.commit()
    return result


def _changes(
    tasks: object, options: LabelStudioOptions, result: SyncResult
) -> tuple[list[Change], dict[int, Place], int]:
    """The records of an export as changes, their places, and the export's newest time."""
    try:
        seen = export_predictions(tasks, options)
        found = list(export_records(tasks, options))
    except LabelStudioFormatError as error:
        raise Invalid(f"Label Studio export: {error}") from None
    assert isinstance(tasks, list)
    result.tasks = len(tasks)
    by_id = {str(task.get("id")): task for task in tasks}
    changes: list[Change] = []
    places: dict[int, Place] = {}
    watermark = 0
    try:
        for task in tasks:  # everything the export knows of, mapped or not
            records = [task, *(task.get("annotations") or []), *(task.get("predictions") or [])]
            for record in records:
                if isinstance(record, Mapping):
                    watermark = max(watermark, version_of(record))
        for place, mapped in found:
            task = by_id[str(place.task_id)]
            record = _record_of(task, place)
            version = version_of(record) if isinstance(record, Mapping) else 0
            if place.kind == "annotation":
                result.annotations += 1
                ident = str(place.ident)
                model_version = label = None
            else:
                result.predictions += 1
                ident = PREDICTION_PREFIX + str(place.ident)
                prediction = seen.get(str(place.ident))
                model_version = None if prediction is None else prediction.model_version
                label = None if prediction is None else prediction.label
            places[len(changes)] = place
            task_id = None if place.task_id is None else str(place.task_id)
            changes.append(Change(ident, version, mapped, task_id, model_version, label))
    except EventError as error:
        raise Invalid(f"Label Studio export: {error}") from None
    return changes, places, watermark


def _record_of(task: Mapping[str, Any], place: Place) -> object:
    listed = task.get("annotations" if place.kind == "annotation" else "predictions") or []
    return listed[place.position - 1]


Wanted = tuple[str, str, str, int | None, str | None]


def _normalised(
    uow: UnitOfWork, project: ProjectRecord, changes: list[Change], places: dict[int, Place]
) -> dict[str, Wanted]:
    """{record: (item, rater, label, labeled_at, rater kind)} as the row checks normalise
    them, so they compare with stored labels; IngestRejected naming the place of a bad one."""
    positions = [i for i, change in enumerate(changes) if change.mapped.record is not None]
    if not positions:
        return {}
    records = [dict(changes[i].mapped.record or {}) for i in positions]
    batch = RawBatch.from_records(records)
    categories = list(category_ids_of(uow, project))
    try:
        valid = validate_batch(batch, categories)
    except IngestRejected as rejection:
        raise IngestRejected(
            [
                RowError(e.row, e.field, f"{places[positions[e.row - 1]]}: {e.message}")
                for e in rejection.errors
            ],
            rejection.total,
        ) from None
    kinds = valid.rater_kind or [None] * len(valid)
    times = valid.labeled_at or [None] * len(valid)
    return {
        changes[i].ident: (
            valid.item[n],
            valid.rater[n],
            valid.label[n],
            times[n],
            None if kinds[n] is None else str(kinds[n].value),  # type: ignore[union-attr]
        )
        for n, i in enumerate(positions)
    }


def _same(have: StoredLabel, want: Wanted) -> bool:
    item, rater, label, labeled_at, kind = want
    return (
        (have.item, have.rater, have.label) == (item, rater, label)
        and (labeled_at is None or labeled_at == have.labeled_at)
        and (kind is None or kind == have.rater_kind)
    )


def _compare(
    applier: Applier,
    change: Change,
    have: StoredLabel | None,
    wanted: dict[str, Wanted],
    result: SyncResult,
) -> None:
    current = applier.seen.get(change.ident)
    if current is not None and current.deleted:
        result.deleted_earlier += 1
        return
    if current is not None and current.version > change.version:
        result.kept_newer += 1
        return
    want = wanted.get(change.ident)
    if want is None and have is not None:  # skipped now: the label stored for it goes
        result.deleted += 1
        applier.store(change)
        return
    if want is None:  # skipped, as before or for the first time
        applier.skipped[str(change.mapped.skipped)] += 1
        applier.ignored.update(change.mapped.ignored)
        if current != change.seen():
            applier.changed[change.ident] = change.seen()
        return
    if have is not None and _same(have, want):
        result.unchanged += 1
        if current != change.seen():  # remembered otherwise (a task id not kept yet)
            applier.changed[change.ident] = change.seen()
        applier.ignored.update(change.mapped.ignored)
        return
    if have is None:
        result.created += 1
    else:
        result.updated += 1
    applier.store(change)
