"""Refused Label Studio webhook calls: counted per project, for the dashboard, /metrics and
the default rule ``default:label_studio_rejected``.

Label Studio sends each event once and never retries (1.23: ``run_webhook`` posts, logs a
failure, and moves on), so a call answered with an error is a change lost until the next sync.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from auditor.storage.db import utc_now
from auditor.storage.label_studio_settings_repository import RejectionRecord
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)


def record_rejection(uow: UnitOfWork, slug: str, status: int, message: str) -> None:
    """Count one refused call of project ``slug`` (nothing for a project that does not
    exist). Never raises: the call is answered whatever happens here."""
    try:
        with uow:
            if uow.label_studio_settings.reject(slug, status, message, utc_now()):
                uow.commit()
    except Exception:  # the database may be why the call was refused (503)
        log.exception("refused Label Studio call of %r not counted", slug)


@dataclass(frozen=True)
class RejectionSummary:
    """A project's refused calls: since the last sync (lost until a sync) and in all."""

    since_sync: int
    total: int
    by_status: dict[int, int]  # since the last sync
    last_at: datetime | None
    last_message: str | None
    last_sync_at: datetime | None


def rejection_summary(uow: UnitOfWork, slug: str) -> RejectionSummary | None:
    """None for a project that neither set Label Studio up nor had a call refused."""
    with uow:
        return summary_in(uow, uow.require_project(slug).id)


def summary_in(uow: UnitOfWork, project_id: int) -> RejectionSummary | None:
    """``rejection_summary`` inside the caller's open unit of work."""
    records = uow.label_studio_settings.rejections(project_id)
    settings = uow.label_studio_settings.get(project_id)
    if not records and settings is None:
        return None
    last = max(records, key=lambda r: r.last_at, default=None)
    return RejectionSummary(
        sum(r.since_sync for r in records),
        sum(r.total for r in records),
        {r.status: r.since_sync for r in records if r.since_sync},
        None if last is None else last.last_at,
        None if last is None else last.last_message,
        None if settings is None else settings.last_sync_at,
    )


def all_rejections(uow: UnitOfWork) -> list[RejectionRecord]:
    """Every project's counts by status (for /metrics)."""
    with uow:
        return uow.label_studio_settings.rejections()
