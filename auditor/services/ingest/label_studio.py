"""Label Studio, live: apply one webhook event to a project in one transaction.

Each annotation's label carries the client key ``label-studio:<annotation id>``; the newest
version of each annotation seen (its ``updated_at``) and its deletion are remembered
(``auditor.ingestion.label_studio_events``). So:

- created: one label per annotation (mapped as ``auditor import --format label-studio``);
- a replay, or an event older than the version stored, writes nothing;
- updated: the annotation's label is replaced (a new label id: the next recompute sees it);
- deleted: its label is removed, and later events for it are ignored;
- cancelled annotations and annotations without one choice are counted, not stored; results
  of other types are counted by type.

Labels go through ``labels.write_labels``, so a label fulfils a planned repeat as from any
other route. Webhook writes of one project are serialised by a lock on its row.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from auditor.ingestion.batch import RawBatch
from auditor.ingestion.label_studio import KEY_PREFIX, LabelStudioOptions
from auditor.ingestion.label_studio_events import Delete, EventError, Upsert, operations
from auditor.services import Invalid
from auditor.services.ingest.labels import RACE_RETRIES, write_labels
from auditor.storage.repositories import WriteConflict
from auditor.storage.unit_of_work import UnitOfWork


def receive_event(
    uow: UnitOfWork, slug: str, payload: object, options: LabelStudioOptions | None = None
) -> dict[str, Any]:
    """Apply one event; the counts of what happened (``{"ignored": action}`` for an action
    this receiver does not handle). A malformed event or a bad label raises and writes
    nothing."""
    try:
        ops = operations(payload, options)
    except EventError as error:
        raise Invalid(f"Label Studio event: {error}") from None
    if ops is None:
        assert isinstance(payload, dict)
        return {"ignored": payload["action"]}
    for attempt in range(RACE_RETRIES):
        try:
            return _apply(uow, slug, ops, str(payload["action"]))  # type: ignore[index]
        except WriteConflict:
            if attempt == RACE_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def _apply(uow: UnitOfWork, slug: str, ops: list[Upsert | Delete], action: str) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    ignored: Counter[str] = Counter()
    with uow:
        project = uow.require_project(slug, for_update=True)
        seen = uow.label_studio.find(project.id, (op.annotation_id for op in ops))
        changed: dict[str, tuple[int, bool]] = {}
        records: dict[str, dict[str, object]] = {}  # annotation id -> label to store
        unlabel: set[str] = set()  # annotation ids whose stored label goes
        for op in ops:
            version, deleted = changed.get(op.annotation_id) or seen.get(
                op.annotation_id, (-1, False)
            )
            if deleted:
                counts["after_delete"] += 1
                continue
            if isinstance(op, Delete):
                changed[op.annotation_id] = (version, True)
                unlabel.add(op.annotation_id)
                records.pop(op.annotation_id, None)
                counts["deleted"] += 1
                continue
            ignored.update(op.mapped.ignored)
            if op.version <= version:
                counts["duplicates"] += 1  # a replay or an older version
                continue
            changed[op.annotation_id] = (op.version, False)
            if version >= 0:
                unlabel.add(op.annotation_id)
                counts["replaced"] += 1
            if op.mapped.record is None:
                records.pop(op.annotation_id, None)
                skipped[str(op.mapped.skipped)] += 1
                continue
            records[op.annotation_id] = {**op.mapped.record, "key": KEY_PREFIX + op.annotation_id}
        removed = uow.label_studio.delete_labels(project.id, (KEY_PREFIX + a for a in unlabel))
        stored = 0
        if records:
            stored = write_labels(
                uow, project, RawBatch.from_records(list(records.values()))
            ).inserted
        uow.label_studio.remember(project.id, changed)
        uow.commit()
    return {
        "action": action,
        "stored": stored,
        "replaced": counts["replaced"],
        "deleted": counts["deleted"],
        "labels_removed": removed,
        "duplicates": counts["duplicates"],
        "after_delete": counts["after_delete"],
        "skipped": dict(skipped),
        "ignored_results": dict(ignored),
    }
