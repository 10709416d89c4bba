"""Worker heartbeats, so distributed ``/healthz`` sees the workers and not only the scan.

Each Celery worker writes a heartbeat row ``worker:<hostname>`` (``scheduler_heartbeats``)
every scan interval from a thread of its main process (``workers/heartbeat.py``), and deletes
it when it shuts down cleanly. ``/healthz`` counts the rows younger than three scan intervals:
none is 503 (degraded: recomputes and alert deliveries are queued, nothing runs them). Before
the first row, the grace period counts from the API process's start, as for the scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from auditor.services.recompute.health import STALE_AFTER_INTERVALS
from auditor.storage.unit_of_work import UnitOfWork

WORKER_PREFIX = "worker:"


def worker_beat(
    uow: UnitOfWork, hostname: str, interval_seconds: float, now: datetime | None = None
) -> None:
    """Record that worker ``hostname`` is alive now."""
    with uow:
        uow.health.write_heartbeat(
            WORKER_PREFIX + hostname[:56],
            now or datetime.now(UTC),
            interval_seconds,
            None,
            completed=True,
        )
        uow.commit()


def worker_gone(uow: UnitOfWork, hostname: str) -> None:
    """A worker that shuts down cleanly takes its row with it."""
    with uow:
        uow.health.delete_heartbeat(WORKER_PREFIX + hostname[:56])
        uow.commit()


@dataclass(frozen=True)
class WorkersReport:
    alive: int  # workers heard from within three of their scan intervals
    last_seen_at: datetime | None
    healthy: bool
    reason: str

    def as_json(self) -> dict[str, object]:
        return {
            "alive": self.alive,
            "last_seen_at": self.last_seen_at.isoformat() if self.last_seen_at else None,
            "reason": self.reason,
        }


def workers_report(
    uow: UnitOfWork, interval_seconds: float, started_at: datetime, now: datetime | None = None
) -> WorkersReport:
    """How many workers answered lately; unhealthy when none did within three scan
    intervals (after the grace period from ``started_at`` when none ever did)."""
    now = now or datetime.now(UTC)
    with uow:
        rows = uow.health.read_heartbeats(WORKER_PREFIX)
    fresh = [
        r
        for r in rows
        if now - r.beat_at <= timedelta(seconds=STALE_AFTER_INTERVALS * r.interval_seconds)
    ]
    last = max((r.beat_at for r in rows), default=None)
    limit = timedelta(seconds=STALE_AFTER_INTERVALS * interval_seconds)
    if fresh:
        return WorkersReport(len(fresh), last, True, "")
    if last is None:
        waited = now - started_at
        if waited <= limit:
            return WorkersReport(0, None, True, "no worker has answered yet (starting?)")
        return WorkersReport(
            0,
            None,
            False,
            f"no worker has answered since start {int(waited.total_seconds())} s ago",
        )
    ago = int((now - last).total_seconds())
    return WorkersReport(
        0,
        last,
        False,
        f"no worker has answered within {int(limit.total_seconds())} s (last {ago} s ago)",
    )
