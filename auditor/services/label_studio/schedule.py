"""Scheduled Label Studio syncs (``auditor label-studio settings --sync-every MINUTES``): which
are due, and one run that records its outcome instead of raising. Celery beat
(``workers.tasks.label_studio_syncs``) and the embedded scheduler call these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from auditor.errors import AuditorError
from auditor.services.label_studio.sync import sync_from_api
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class ScheduledSync:
    project: str
    status: str  # "ok: ..." or "error: ..."


def due_syncs(uow: UnitOfWork, now: datetime) -> list[str]:
    """The projects whose scheduled sync is due (``sync_minutes`` since the last one)."""
    with uow:
        scheduled = uow.label_studio_settings.scheduled()
        due = [
            project_id
            for project_id, minutes, last in scheduled
            if last is None or now - last >= timedelta(minutes=minutes)
        ]
        slugs = [uow.projects.by_id(project_id) for project_id in due]
    return [project.slug for project in slugs if project is not None]


def run_scheduled_sync(uow: UnitOfWork, slug: str, now: datetime | None = None) -> ScheduledSync:
    """One scheduled sync; a failure is recorded on the settings (shown by ``auditor
    label-studio settings``) and returned, never raised: the next one is tried on time."""
    at = now or datetime.now(UTC)
    try:
        result = sync_from_api(uow, slug)
    except AuditorError as error:
        status = f"error: {error}"
        with uow:
            project = uow.require_project(slug)
            uow.label_studio_settings.synced(project.id, at, status)
            uow.commit()
        return ScheduledSync(slug, status)
    return ScheduledSync(slug, "ok: " + result.summary())
