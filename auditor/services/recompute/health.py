"""Recompute health: failures recorded per project with a growing backoff, the scheduler's
heartbeat and how ``/healthz`` judges it, and the pruning of expired idempotency records.

A recompute that fails for a reason a retry at once would not fix (a bug, bad stored data, an
alert rule that overflows) is recorded: how many failures, the last error and when. The scan
leaves the project alone until ``retry_after``: 1, 2, 4, 8 then 10 scan intervals after
consecutive failures, so a broken project is retried, never in a hot loop, and never stops the
others. The next success ends the run and keeps the history.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from auditor.storage.health_repository import FailureRow, HeartbeatRow

__all__ = ["FailureRow", "HeartbeatRow", "SchedulerHealth", "SchedulerReport"]
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

MAX_BACKOFF_INTERVALS = 10
STALE_AFTER_INTERVALS = 3
BEAT = "beat"  # the heartbeat row of the Celery beat's scan


def backoff(consecutive: int, scan_interval_seconds: float) -> timedelta:
    """How long to leave a project alone after its ``consecutive``-th failure in a row."""
    intervals = min(2 ** max(consecutive - 1, 0), MAX_BACKOFF_INTERVALS)
    return timedelta(seconds=intervals * scan_interval_seconds)


def describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[-1] if text else ''}".rstrip(": ")


def record_failure(
    uow: UnitOfWork,
    project_id: int,
    error: BaseException,
    scan_interval_seconds: float,
    now: datetime | None = None,
) -> FailureRow | None:
    """Record one failure of ``project_id`` in its own transaction (never raises: a failure to
    record is logged, the caller is already handling an error)."""
    now = now or datetime.now(UTC)
    try:
        with uow:
            n = uow.health.consecutive_failures(project_id) + 1
            row = uow.health.record_failure(
                project_id, describe(error), now, backoff(n, scan_interval_seconds)
            )
            uow.commit()
    except Exception:
        log.exception("could not record the failure of project %s", project_id)
        return None
    if row is not None:
        log.error(
            "recompute failed project=%s (%s) failures=%s consecutive=%s retry_after=%s: %s",
            project_id,
            row.slug,
            row.failures,
            row.consecutive,
            row.retry_after.isoformat() if row.retry_after else None,
            row.last_error,
        )
    return row


def failures(uow: UnitOfWork, project_id: int | None = None) -> list[FailureRow]:
    with uow:
        if project_id is None:
            return uow.health.all_failures()
        row = uow.health.failure_of(project_id)
        return [row] if row else []


def beat(
    uow: UnitOfWork,
    interval_seconds: float,
    error: BaseException | None = None,
    now: datetime | None = None,
    name: str = BEAT,
    prune_ttl: timedelta | None = None,
) -> None:
    """Record that a scan completed (``error`` None) or failed (only the error is updated);
    with ``prune_ttl``, expired idempotency records go in the same short transaction."""
    now = now or datetime.now(UTC)
    with uow:
        uow.health.write_heartbeat(
            name,
            now,
            interval_seconds,
            None if error is None else describe(error),
            completed=error is None,
        )
        pruned = 0 if prune_ttl is None else uow.health.prune_idempotency(now - prune_ttl)
        uow.commit()
    if pruned:
        log.info("pruned %s expired idempotency records", pruned)


def read_beat(uow: UnitOfWork, name: str = BEAT) -> HeartbeatRow | None:
    with uow:
        return uow.health.read_heartbeat(name)


def prune_idempotency(uow: UnitOfWork, ttl: timedelta, now: datetime | None = None) -> int:
    """Delete idempotency records older than ``ttl``; returns how many."""
    with uow:
        deleted = uow.health.prune_idempotency((now or datetime.now(UTC)) - ttl)
        uow.commit()
    if deleted:
        log.info("pruned %s expired idempotency records", deleted)
    return deleted


class SchedulerHealth:
    """What the embedded loop last did; read by ``/healthz`` from another thread."""

    def __init__(self, interval_seconds: float) -> None:
        self.interval_seconds = interval_seconds
        self.started_at = datetime.now(UTC)
        self.last_cycle_at: datetime | None = None
        self.last_error: str | None = None
        self.last_error_at: datetime | None = None
        self._cycle_errors = 0
        self.last_cycle_errors = 0
        self.thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def cycle_done(self, at: datetime | None = None) -> None:
        with self._guard:
            self.last_cycle_at = at or datetime.now(UTC)
            self.last_cycle_errors, self._cycle_errors = self._cycle_errors, 0

    def error(self, where: str, error: BaseException) -> None:
        with self._guard:
            self.last_error = f"{where}: {describe(error)}"
            self.last_error_at = datetime.now(UTC)
            self._cycle_errors += 1

    def report(self, now: datetime | None = None) -> SchedulerReport:
        with self._guard:
            alive = self.thread is None or self.thread.is_alive()
            report = judge(
                alive,
                self.last_cycle_at,
                self.started_at,
                self.interval_seconds,
                self.last_error,
                now or datetime.now(UTC),
                mode="embedded",
            )
            return replace(report, errors_last_cycle=self.last_cycle_errors)


@dataclass(frozen=True)
class SchedulerReport:
    mode: str
    alive: bool
    last_cycle_at: datetime | None
    last_error: str | None
    healthy: bool
    reason: str
    errors_last_cycle: int = 0
    failing_projects: int = 0

    @property
    def degraded(self) -> bool:
        """Running, but the last cycle had errors or some project's recomputes fail."""
        return not self.healthy or self.errors_last_cycle > 0 or self.failing_projects > 0

    def as_json(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "alive": self.alive,
            "last_cycle_at": self.last_cycle_at.isoformat() if self.last_cycle_at else None,
            "last_error": self.last_error,
            "errors_last_cycle": self.errors_last_cycle,
            "failing_projects": self.failing_projects,
            "reason": self.reason,
        }


def judge(
    alive: bool,
    last_cycle_at: datetime | None,
    started_at: datetime,
    interval_seconds: float,
    last_error: str | None,
    now: datetime,
    mode: str,
) -> SchedulerReport:
    """Healthy: the scheduler runs and completed a cycle within three scan intervals (before
    the first cycle, counted from when it started)."""
    limit = timedelta(seconds=STALE_AFTER_INTERVALS * interval_seconds)
    since = last_cycle_at or started_at
    if not alive:
        reason = "the scheduler thread is dead"
    elif now - since > limit:
        what = "last completed cycle" if last_cycle_at else "start, with no completed cycle"
        reason = f"{what} {int((now - since).total_seconds())} s ago (limit {limit.seconds} s)"
    else:
        reason = ""
    return SchedulerReport(mode, alive, last_cycle_at, last_error, not reason, reason)


def distributed_report(
    uow: UnitOfWork, interval_seconds: float, started_at: datetime, now: datetime | None = None
) -> SchedulerReport:
    """The beat's scan as seen through its heartbeat row (any API process can read it). With
    no row yet (beat may be starting), the grace period counts from this process's start.
    ``alive`` here means "a scan completed recently": a beat process is not ours to watch."""
    row = read_beat(uow)
    report = judge(
        True,
        row.beat_at if row else None,
        started_at,
        row.interval_seconds if row else interval_seconds,
        row.last_error if row else None,
        now or datetime.now(UTC),
        mode="distributed",
    )
    return SchedulerReport(
        "distributed",
        report.healthy,
        report.last_cycle_at,
        report.last_error,
        report.healthy,
        report.reason if row else (report.reason or "no scan has completed yet"),
        errors_last_cycle=1 if row is not None and row.last_error else 0,
    )


def with_failing_projects(uow: UnitOfWork, report: SchedulerReport) -> SchedulerReport:
    """``report`` with the number of projects whose latest recompute failed."""
    with uow:
        return replace(report, failing_projects=uow.health.count_failing())
