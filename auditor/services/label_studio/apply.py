"""What Label Studio says, applied to a project's labels inside the caller's transaction: the
webhook's events and the sync's comparison end here.

Each annotation (and prediction) is one record, ``<annotation id>`` or ``prediction:<id>``; its
label carries the client key ``label-studio:<record>``. The newest version seen of each record
(its ``updated_at``), its task, and a deletion are remembered (``uow.label_studio``). A label
changes by delete and insert (a new label id: the next recompute sees it); inserts go through
``labels.write_labels``, so they fulfil planned repeats as labels from any route do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from auditor.ingestion.batch import RawBatch
from auditor.ingestion.label_studio import KEY_PREFIX, Mapped
from auditor.services.ingest.labels import write_labels
from auditor.storage.label_studio_repository import SeenRecord
from auditor.storage.project_repository import ProjectRecord
from auditor.storage.unit_of_work import UnitOfWork

WEBHOOK_SOURCE = "label-studio"
SYNC_SOURCE = "label-studio sync"


@dataclass(frozen=True)
class Change:
    """One record as Label Studio has it now."""

    ident: str  # "<annotation id>" or "prediction:<id>"
    version: int
    mapped: Mapped
    task_id: str | None = None
    model_version: str | None = None  # predictions: the model, and the label it gave
    label: str | None = None

    def seen(self, deleted: bool = False) -> SeenRecord:
        return SeenRecord(self.version, deleted, self.task_id, self.model_version, self.label)


class Applier:
    """Label changes gathered, then written at once by ``finish``."""

    def __init__(self, uow: UnitOfWork, project: ProjectRecord, source: str) -> None:
        self.uow = uow
        self.project = project
        self.source = source
        self.seen: dict[str, SeenRecord] = {}  # what was remembered before, as loaded
        self.changed: dict[str, SeenRecord] = {}  # what to remember now
        self.forgotten: set[str] = set()
        self.records: dict[str, dict[str, object]] = {}  # record -> label to store
        self.unlabel: set[str] = set()  # client keys whose label goes
        self.counts: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.ignored: Counter[str] = Counter()

    def load(self, idents: list[str]) -> None:
        missing = [i for i in idents if i not in self.seen]
        self.seen.update(self.uow.label_studio.find(self.project.id, missing))

    def current(self, ident: str) -> SeenRecord | None:
        return self.changed.get(ident) or self.seen.get(ident)

    def store(self, change: Change) -> None:
        """Make the record's label what ``change`` maps to (or none, for a skip)."""
        self.changed[change.ident] = change.seen()
        self.forgotten.discard(change.ident)
        self.unlabel.add(KEY_PREFIX + change.ident)
        self.ignored.update(change.mapped.ignored)
        if change.mapped.record is None:
            self.records.pop(change.ident, None)
            self.skipped[str(change.mapped.skipped)] += 1
        else:
            self.records[change.ident] = {**change.mapped.record, "key": KEY_PREFIX + change.ident}

    def upsert(self, change: Change) -> None:
        """A webhook's created or updated record: newer than the stored version, or nothing."""
        current = self.current(change.ident)
        if current is not None and current.deleted:
            self.counts["after_delete"] += 1
            return
        if current is not None and change.version <= current.version:
            self.ignored.update(change.mapped.ignored)
            self.counts["duplicates"] += 1  # a replay or an older version
            return
        if current is not None:
            self.counts["replaced"] += 1
        self.store(change)

    def delete(self, ident: str, *, remember: bool = True) -> None:
        """The record is gone from Label Studio: its label goes. ``remember``: keep the
        deletion for ever (the webhook: later events for it change nothing); else forget the
        record (the sync: a later export that has it again brings it back)."""
        current = self.current(ident)
        if current is not None and current.deleted:
            self.counts["after_delete"] += 1
            return
        self.records.pop(ident, None)
        self.unlabel.add(KEY_PREFIX + ident)
        self.counts["deleted"] += 1
        if remember:
            base = current or SeenRecord(-1, False)
            self.changed[ident] = SeenRecord(
                base.version, True, base.task_id, base.model_version, base.label
            )
        else:
            self.changed.pop(ident, None)
            self.forgotten.add(ident)

    def finish(self) -> tuple[int, int]:
        """Write what was gathered: (labels stored, labels removed)."""
        project = self.project
        removed = self.uow.label_studio.delete_labels(project.id, self.unlabel)
        stored = 0
        if self.records:
            batch = RawBatch.from_records(list(self.records.values()))
            stored = write_labels(
                self.uow, project, batch, created_by="label-studio", source=self.source
            ).inserted
        self.uow.label_studio.forget(project.id, self.forgotten)
        self.uow.label_studio.remember(project.id, self.changed)
        return stored, removed
