"""Embedded mode: the same scan and recompute as the Celery deployment, on an in-process timer.

With no ``AUDITOR_BROKER_URL``, ``auditor run`` and ``auditor serve`` call
``run_embedded``: every ``interval`` seconds, scan for dirty projects and recompute each one
here, one after the other (and the scheduled Label Studio syncs that are due). The project
lock, the unique (project, scope, tick) key and the dirty check make it safe to run beside
workers too, but one process is the intended use.

The loop never dies of an error (issue 11): a failing project is logged with its id, recorded
(``recompute_health``: the scan backs off from it) and the loop goes on with the next project
and the next cycle. Notices are delivered by a thread of their own (``run_delivery``), so a
slow receiver never holds up recomputes. ``SchedulerHealth`` tells ``/healthz`` how it goes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from auditor.services.alerts.delivery import deliver_due
from auditor.services.label_studio.schedule import due_syncs, run_scheduled_sync
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute.health import SchedulerHealth
from auditor.services.recompute.recompute import (
    RecomputeFailed,
    RecomputeInterrupted,
    RecomputeResult,
    recompute_project,
    scan_dirty_projects,
)
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
DELIVERY_INTERVAL_SECONDS = 5.0
DEFAULT_IDEMPOTENCY_TTL = timedelta(days=7)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def run_cycle(
    uow: UnitOfWork,
    clock: Clock = _utc_now,
    *,
    interval_seconds: float = 60.0,
    deliver: bool = True,
    health: SchedulerHealth | None = None,
    idempotency_ttl: timedelta = DEFAULT_IDEMPOTENCY_TTL,
) -> list[RecomputeResult]:
    """One scan and the recomputes it calls for, project by project. No error escapes: each
    is logged with its project and kept in ``health``; a database that went away is retried
    at the next cycle (the recompute wrote all or nothing)."""
    now = clock()
    try:
        dirty = scan_dirty_projects(uow, now)
    except Exception as error:
        log.exception("scan failed; will retry at the next cycle")
        if health is not None:
            health.error("scan", error)
        return []
    results = []
    for project in dirty:
        try:
            result = recompute_project(
                uow,
                project.project_id,
                now=now,
                tick=project.tick,
                scan_interval_seconds=interval_seconds,
            )
        except RecomputeInterrupted as error:
            log.warning("recompute of project %s interrupted, retried next cycle: %s",
                        project.slug, error)  # fmt: skip
            if health is not None:
                health.error(f"project {project.slug}", error)
            continue
        except Exception as error:  # RecomputeFailed (recorded) or anything unforeseen
            if not isinstance(error, RecomputeFailed):
                log.exception("recompute of project %s failed", project.slug)
            if health is not None:
                health.error(f"project {project.slug}", error)
            continue
        results.append(result)
        if result.written:
            scopes = ", ".join(f"{w.scope} ({w.n_labels} labels)" for w in result.written)
            log.info("project %s tick %s: snapshots %s", project.slug, result.tick, scopes)
    _guarded("idempotency pruning", health, recompute_health.prune_idempotency, uow,
             idempotency_ttl)  # fmt: skip
    _guarded("Label Studio syncs", health, run_due_syncs, uow, now)
    if deliver:
        _guarded("notification delivery", health, deliver_due, uow)
    return results


def run_due_syncs(uow: UnitOfWork, now: datetime) -> None:
    """The scheduled Label Studio syncs that are due (``--sync-every``), one after the other;
    each records its own outcome on the project's settings."""
    for slug in due_syncs(uow, now):
        log.info("label studio sync %s: %s", slug, run_scheduled_sync(uow, slug, now).status)


def _guarded(what: str, health: SchedulerHealth | None, call: Callable, *args: object) -> None:
    try:
        call(*args)
    except Exception as error:  # the loop must outlive a lost database or a broken row
        log.exception("%s failed; will retry at the next cycle", what)
        if health is not None:
            health.error(what, error)


def run_embedded(
    uow: UnitOfWork,
    interval_seconds: float,
    stop: threading.Event,
    *,
    clock: Clock = _utc_now,
    on_cycle: Callable[[list[RecomputeResult]], None] | None = None,
    max_cycles: int | None = None,
    deliver: bool = True,
    health: SchedulerHealth | None = None,
    idempotency_ttl: timedelta = DEFAULT_IDEMPOTENCY_TTL,
) -> int:
    """Run cycles every ``interval_seconds`` until ``stop`` is set (or ``max_cycles`` ran).
    Returns the number of cycles. Cycles start on a fixed cadence; a slow cycle delays the
    next one instead of piling up. ``deliver``: send notices in the cycle (False when a
    delivery thread does it)."""
    if interval_seconds <= 0:
        raise ValueError(f"interval must be positive, got {interval_seconds}")
    cycles = 0
    next_start = time.monotonic()
    while not stop.is_set():
        try:
            results = run_cycle(
                uow,
                clock,
                interval_seconds=interval_seconds,
                deliver=deliver,
                health=health,
                idempotency_ttl=idempotency_ttl,
            )
            if on_cycle is not None:
                on_cycle(results)
        except Exception as error:  # never seen, but a dead loop is the worst outcome
            log.exception("recompute cycle failed; the loop goes on")
            if health is not None:
                health.error("cycle", error)
        else:
            if health is not None:
                health.cycle_done()
        cycles += 1
        if max_cycles is not None and cycles >= max_cycles:
            break
        next_start = max(next_start + interval_seconds, time.monotonic())
        stop.wait(max(0.0, next_start - time.monotonic()))
    return cycles


def run_delivery(
    uow: UnitOfWork,
    interval_seconds: float,
    stop: threading.Event,
    health: SchedulerHealth | None = None,
) -> None:
    """Send due notices every ``interval_seconds`` until ``stop`` is set (its own thread)."""
    while not stop.is_set():
        _guarded("notification delivery", health, deliver_due, uow)
        stop.wait(interval_seconds)


def start_in_thread(
    uow_factory: Callable[[], UnitOfWork],
    interval_seconds: float,
    *,
    idempotency_ttl: timedelta = DEFAULT_IDEMPOTENCY_TTL,
) -> tuple[threading.Thread, threading.Event, SchedulerHealth]:
    """Run the embedded loop, and notice delivery beside it, in daemon threads (for
    ``auditor serve`` and ``auditor run``); set the event to stop both."""
    stop = threading.Event()
    health = SchedulerHealth(interval_seconds)
    thread = threading.Thread(
        target=run_embedded,
        args=(uow_factory(), interval_seconds, stop),
        kwargs={"deliver": False, "health": health, "idempotency_ttl": idempotency_ttl},
        name="auditor-embedded-recompute",
        daemon=True,
    )
    health.thread = thread
    delivery = threading.Thread(
        target=run_delivery,
        args=(uow_factory(), min(interval_seconds, DELIVERY_INTERVAL_SECONDS), stop, health),
        name="auditor-embedded-delivery",
        daemon=True,
    )
    thread.start()
    delivery.start()
    return thread, stop, health
