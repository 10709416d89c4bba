"""Imports as things a team can list, inspect and undo; and deleting a whole project.

A revert deletes the labels of one import in one transaction and marks the record reverted
(the record stays: the history shows where a revert happened). In the same transaction, the
planned repeats those labels fulfilled are fulfilled no more (``unfulfil_deleted``).
Snapshots are never touched: the next recompute sees fewer labels (its dirty check compares
the label count; none left is a change too) and writes a new snapshot, so the history keeps
what was computed before the revert.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from auditor.domain import to_micros
from auditor.errors import Conflict, NotFound
from auditor.services.ingest.labels import LABEL_STUDIO_SOURCES
from auditor.storage.db import utc_now
from auditor.storage.import_repository import ImportRow
from auditor.storage.project_repository import ProjectRecord
from auditor.storage.repeat_repository import Unfulfilled
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class ImportView:
    id: int
    source: str
    content_hash: str | None
    rows: int
    inserted: int
    duplicates: int
    created_by: str
    created_at: datetime
    reverted_at: datetime | None
    reverted_labels: int | None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("created_at", "reverted_at"):
            data[name] = data[name].isoformat() if data[name] is not None else None
        return data


@dataclass(frozen=True)
class RevertResult:
    import_id: int
    deleted: int
    reverted_at: datetime
    # planned repeats these labels had fulfilled, and what became of them
    repeats: Unfulfilled


def _view(record: ImportRow) -> ImportView:
    return ImportView(
        id=record.id,
        source=record.source,
        content_hash=record.content_hash,
        rows=record.rows,
        inserted=record.inserted,
        duplicates=record.duplicates,
        created_by=record.created_by,
        created_at=record.created_at,
        reverted_at=record.reverted_at,
        reverted_labels=record.reverted_labels,
    )


def _record(
    uow: UnitOfWork, project: ProjectRecord, import_id: int, *, for_update: bool = False
) -> ImportRow:
    record = uow.imports.get_import(project.id, import_id, for_update=for_update)
    if record is None:
        raise NotFound(f"no import {import_id} in project {project.slug!r}")
    return record


def list_imports(uow: UnitOfWork, slug: str) -> list[ImportView]:
    with uow:
        return [_view(r) for r in uow.imports.list_imports(uow.require_project(slug).id)]


def show_import(uow: UnitOfWork, slug: str, import_id: int) -> ImportView:
    with uow:
        return _view(_record(uow, uow.require_project(slug), import_id))


def revert_import(uow: UnitOfWork, slug: str, import_id: int) -> RevertResult:
    """Delete the labels of one import, all in one transaction; refuses a second revert."""
    with uow:
        project = uow.require_project(slug)
        # Locked: a concurrent revert of this import waits here, then sees it reverted (409)
        # instead of deleting nothing and overwriting the count with 0.
        record = _record(uow, project, import_id, for_update=True)
        if record.reverted_at is not None:
            raise Conflict(
                f"import {import_id} was already reverted at "
                f"{record.reverted_at.isoformat(timespec='seconds')}"
            )
        if record.source in LABEL_STUDIO_SOURCES:
            raise Conflict(
                f"import {import_id} was written by Label Studio ({record.source}): its "
                "labels follow Label Studio's annotations (delete them there, or change the "
                f"project's Label Studio settings and run `auditor label-studio sync {slug}`)"
            )
        reverted_at = utc_now()
        deleted = uow.imports.revert(record, reverted_at)
        # A repeat the deleted labels fulfilled is not fulfilled any more: same transaction.
        repeats = uow.repeats.unfulfil_deleted(project.id, to_micros(reverted_at))
        uow.commit()
        return RevertResult(import_id, deleted, reverted_at, repeats)


def delete_project(uow: UnitOfWork, slug: str) -> dict[str, int]:
    """Delete a project and everything it owns in one transaction; rows deleted per table."""
    with uow:
        project = uow.require_project(slug, for_update=True)
        deleted = uow.imports.delete_project(project.id)
        uow.commit()
        return deleted
