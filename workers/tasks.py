"""Tasks take ids, call one service, and are safe to run twice.

- ``scan``: read-only; finds dirty projects and enqueues ``recompute(project_id, tick)`` for
  each, after its transaction has ended (nothing is enqueued before what it needs is
  committed: the scan reads committed labels only).
- ``recompute``: one unit of work under the project's lock. A duplicate (two beats, a
  redelivery after a worker died) finds the tick already written or the project clean and
  writes nothing. A database that went away (restart, terminated backend) raises
  ``RecomputeInterrupted``, retried with exponential backoff; nothing partial was written.
  Transient errors (serialization failures, lock timeouts, dropped connections) are all
  ``OperationalError`` and land there. Once the retries are spent the failure is recorded on
  the project like any other: ``RecomputeFailed`` (a deterministic failure, recorded by the
  service) returns "failed" instead of raising, and the scan backs off from the project.
- the scan also records the beat heartbeat ``/healthz`` reads, and prunes expired
  idempotency records.
- ``label_studio_syncs`` / ``label_studio_sync``: the scheduled Label Studio syncs (a project
  that set ``--sync-every``): beat finds the due ones, a worker runs each.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import Task

from auditor.config import get_settings
from auditor.services.alerts.delivery import deliver_due
from auditor.services.label_studio.schedule import due_syncs, run_scheduled_sync
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute.recompute import (
    RecomputeFailed,
    RecomputeInterrupted,
    recompute_project,
    scan_dirty_projects,
)
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from workers.celery_app import (
    DELIVER_TASK,
    LABEL_STUDIO_SYNC_TASK,
    LABEL_STUDIO_SYNCS_TASK,
    RECOMPUTE_TASK,
    SCAN_TASK,
    app,
)

log = logging.getLogger(__name__)

_engines: dict[int, Any] = {}


def _uow() -> UnitOfWork:
    # One engine per process: prefork children must not share the parent's connections.
    pid = os.getpid()
    if pid not in _engines:
        _engines.clear()
        _engines[pid] = make_engine(get_settings().database_url)
    return UnitOfWork(_engines[pid])


@app.task(name=SCAN_TASK, ignore_result=True)
def scan() -> int:
    """Enqueue a recompute for every dirty project; returns how many."""
    interval = get_settings().scan_interval_seconds
    try:
        dirty = scan_dirty_projects(_uow())
    except Exception as error:
        try:
            recompute_health.beat(_uow(), interval, error)
        except Exception:  # the database is down: /healthz sees the heartbeat go stale
            log.warning("could not record the failed scan in the heartbeat")
        raise
    for project in dirty:
        recompute.delay(project.project_id, project.tick)
        log.info(
            "enqueued recompute project=%s tick=%s (%s)",
            project.project_id,
            project.tick,
            "; ".join(project.reasons),
        )
    ttl = timedelta(seconds=get_settings().idempotency_ttl_seconds)
    recompute_health.beat(_uow(), interval, prune_ttl=ttl)
    return len(dirty)


class RecomputeTask(Task):
    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        # Reached when the retries of a transient error are spent (deterministic failures
        # return "failed" after the service recorded them): record it on the project too.
        if args:
            recompute_health.record_failure(
                _uow(), int(args[0]), exc, get_settings().scan_interval_seconds
            )


@app.task(
    base=RecomputeTask,
    name=RECOMPUTE_TASK,
    ignore_result=True,
    autoretry_for=(RecomputeInterrupted,),
    retry_backoff=1,
    retry_backoff_max=60,
    retry_jitter=False,
    max_retries=10,
)
def recompute(project_id: int, tick: int) -> str:
    """Recompute one project for ``tick``; returns the outcome (written, not_dirty, ...)."""
    interval = get_settings().scan_interval_seconds
    try:
        result = recompute_project(
            _uow(), int(project_id), tick=int(tick), scan_interval_seconds=interval
        )
    except RecomputeFailed as error:  # recorded on the project; the scan backs off
        log.error("recompute project=%s tick=%s failed: %s", project_id, tick, error)
        return "failed"
    log.info(
        "recompute project=%s tick=%s status=%s scopes=%s",
        project_id,
        tick,
        result.status,
        ",".join(w.scope for w in result.written),
    )
    if result.written:
        try:
            deliver.delay()  # alerts: send the notices this recompute queued, now
        except Exception as error:  # the snapshots are committed; beat's pass sends them
            log.warning("could not enqueue notice delivery: %s", error)
    return result.status


@app.task(name=DELIVER_TASK, ignore_result=True)
def deliver() -> int:
    """Alerts (issue 5): one pass of the outbox sender; safe to run on several workers at
    once (rows are claimed with a lease). Returns how many notices it handled."""
    report = deliver_due(_uow())
    for d in report.deliveries:
        log.info("notice %s via %s: %s", d.event_id, d.channel, d.status)
    return len(report.deliveries)


@app.task(name=LABEL_STUDIO_SYNCS_TASK, ignore_result=True)
def label_studio_syncs() -> int:
    """Enqueue the scheduled Label Studio syncs that are due; returns how many."""
    due = due_syncs(_uow(), datetime.now(UTC))
    for slug in due:
        label_studio_sync.delay(slug)
    return len(due)


@app.task(name=LABEL_STUDIO_SYNC_TASK, ignore_result=True)
def label_studio_sync(slug: str) -> str:
    """One project's sync from Label Studio's API (twice at once is safe: the project's lock
    serialises them and the second changes nothing). A failure is recorded on the project's
    settings and logged; the next is tried on time."""
    done = run_scheduled_sync(_uow(), slug)
    log.info("label studio sync project=%s %s", slug, done.status)
    return done.status
