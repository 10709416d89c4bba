"""Reads and writes of recompute health: per-project failures, the scheduler heartbeat, and
the pruning of expired idempotency records. The caller owns the transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from auditor.storage.db import affected
from auditor.storage.health_models import RecomputeFailure, SchedulerHeartbeat
from auditor.storage.key_models import IdempotencyRecord
from auditor.storage.models import Project

ERROR_TEXT_MAX = 2000  # a traceback's last line is what matters; cap what one row can hold


@dataclass(frozen=True)
class FailureRow:
    project_id: int
    slug: str
    failures: int
    consecutive: int
    last_error: str
    last_failed_at: datetime
    retry_after: datetime | None


@dataclass(frozen=True)
class HeartbeatRow:
    name: str
    beat_at: datetime
    interval_seconds: float
    last_error: str | None


class HealthRepository:
    """Recompute failures and backoff, the scheduler's heartbeat, idempotency pruning
    (``uow.health``)."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def record_failure(
        self, project_id: int, error: str, now: datetime, backoff: timedelta
    ) -> FailureRow | None:
        """Count one more failure of ``project_id`` and hold it off until ``now + backoff(n)``
        where the caller's ``backoff`` is already computed for the new consecutive count."""
        row = self.db.get(RecomputeFailure, project_id, with_for_update=True)
        if row is None:
            if self.db.get(Project, project_id) is None:
                return None  # the project was deleted meanwhile
            row = RecomputeFailure(project_id=project_id, failures=0, consecutive=0)
            self.db.add(row)
        row.failures += 1
        row.consecutive += 1
        row.last_error = error[:ERROR_TEXT_MAX]
        row.last_failed_at = now
        row.retry_after = now + backoff
        self.db.flush()
        return self.failure_of(project_id)

    def consecutive_failures(self, project_id: int) -> int:
        found = self.db.execute(
            select(RecomputeFailure.consecutive).where(RecomputeFailure.project_id == project_id)
        ).scalar()
        return int(found or 0)

    def clear_backoff(self, project_id: int) -> None:
        """A recompute succeeded: end the failure run (the history stays)."""
        self.db.execute(
            update(RecomputeFailure)
            .where(RecomputeFailure.project_id == project_id, RecomputeFailure.consecutive > 0)
            .values(consecutive=0, retry_after=None)
        )

    def count_failing(self) -> int:
        """Projects whose latest recompute failed (no success since)."""
        found = self.db.execute(
            select(func.count())
            .select_from(RecomputeFailure)
            .where(RecomputeFailure.consecutive > 0)
        ).scalar()
        return int(found or 0)

    def backing_off(self, now: datetime) -> set[int]:
        """Projects the scan must leave alone at ``now``."""
        rows = self.db.execute(
            select(RecomputeFailure.project_id).where(RecomputeFailure.retry_after > now)
        ).scalars()
        return {int(p) for p in rows}

    def _failure_rows(self, project_id: int | None) -> list[FailureRow]:
        query = select(RecomputeFailure, Project.slug).join(
            Project, Project.id == RecomputeFailure.project_id
        )
        if project_id is not None:
            query = query.where(RecomputeFailure.project_id == project_id)
        return [
            FailureRow(
                f.project_id,
                slug,
                f.failures,
                f.consecutive,
                f.last_error,
                f.last_failed_at,
                f.retry_after,
            )
            for f, slug in self.db.execute(query.order_by(Project.slug)).all()
        ]

    def failure_of(self, project_id: int) -> FailureRow | None:
        rows = self._failure_rows(project_id)
        return rows[0] if rows else None

    def all_failures(self) -> list[FailureRow]:
        return self._failure_rows(None)

    def write_heartbeat(
        self,
        name: str,
        now: datetime,
        interval_seconds: float,
        error: str | None,
        *,
        completed: bool,
    ) -> None:
        """``completed``: a scan finished (``beat_at`` moves, the error clears); otherwise only
        the error is written, so a failing scan does not look alive."""
        row = self.db.get(SchedulerHeartbeat, name, with_for_update=True)
        if row is None:
            if not completed:
                return
            row = SchedulerHeartbeat(name=name)
            self.db.add(row)
        if completed:
            row.beat_at = now
        row.interval_seconds = interval_seconds
        row.last_error = None if error is None else error[:ERROR_TEXT_MAX]
        self.db.flush()

    def read_heartbeat(self, name: str) -> HeartbeatRow | None:
        row = self.db.get(SchedulerHeartbeat, name)
        if row is None:
            return None
        return HeartbeatRow(row.name, row.beat_at, row.interval_seconds, row.last_error)

    def read_heartbeats(self, prefix: str) -> list[HeartbeatRow]:
        """Every heartbeat whose name starts with ``prefix`` (the workers' rows)."""
        rows = self.db.scalars(
            select(SchedulerHeartbeat).where(SchedulerHeartbeat.name.startswith(prefix))
        )
        return [HeartbeatRow(r.name, r.beat_at, r.interval_seconds, r.last_error) for r in rows]

    def delete_heartbeat(self, name: str) -> None:
        self.db.execute(delete(SchedulerHeartbeat).where(SchedulerHeartbeat.name == name))

    def prune_idempotency(self, older_than: datetime) -> int:
        """Delete idempotency records created before ``older_than``; returns how many."""
        result = self.db.execute(
            delete(IdempotencyRecord).where(IdempotencyRecord.created_at < older_than)
        )
        return affected(result)
