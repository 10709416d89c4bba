"""Embedded mode: the same scan and recompute as the Celery deployment, on an in-process timer.

With no ``AUDITOR_BROKER_URL``, ``auditor run`` and ``auditor serve`` call
``run_embedded``: every ``interval`` seconds, scan for dirty projects and recompute each one
here, one after the other. The project lock, the unique (project, scope, tick) key and the
dirty check make it safe to run beside workers too, but one process is the intended use.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from auditor.services import alerts as _evaluation  # noqa: F401  (rules judged after each snapshot)
from auditor.services.alert_delivery import deliver_due
from auditor.services.audit import RecomputeInterrupted, RecomputeResult, recompute_due_projects
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def run_cycle(uow: UnitOfWork, clock: Clock = _utc_now) -> list[RecomputeResult]:
    """One scan and the recomputes it calls for. A database that went away is logged and
    retried at the next cycle (it lost nothing: the recompute wrote all or nothing)."""
    try:
        results = recompute_due_projects(uow, clock())
    except RecomputeInterrupted as error:
        log.warning("recompute interrupted, will retry at the next cycle: %s", error)
        return []
    for result in results:
        if result.written:
            scopes = ", ".join(f"{w.scope} ({w.n_labels} labels)" for w in result.written)
            log.info("project %s tick %s: snapshots %s", result.project_id, result.tick, scopes)
    _deliver_notices(uow)
    return results


def _deliver_notices(uow: UnitOfWork) -> None:
    """Alerts (issue 5): send the notices the recomputes queued (and any due retries), on
    the wall clock. With Celery, the ``auditor.deliver`` beat task does this instead. A
    failure here is logged and retried next cycle: the outbox keeps every notice."""
    try:
        deliver_due(uow)
    except Exception:  # the loop must outlive a lost database or a broken channel row
        log.exception("notification delivery failed; will retry at the next cycle")


def run_embedded(
    uow: UnitOfWork,
    interval_seconds: float,
    stop: threading.Event,
    *,
    clock: Clock = _utc_now,
    on_cycle: Callable[[list[RecomputeResult]], None] | None = None,
    max_cycles: int | None = None,
) -> int:
    """Run cycles every ``interval_seconds`` until ``stop`` is set (or ``max_cycles`` ran).
    Returns the number of cycles. Cycles start on a fixed cadence; a slow cycle delays the
    next one instead of piling up."""
    if interval_seconds <= 0:
        raise ValueError(f"interval must be positive, got {interval_seconds}")
    cycles = 0
    next_start = time.monotonic()
    while not stop.is_set():
        results = run_cycle(uow, clock)
        cycles += 1
        if on_cycle is not None:
            on_cycle(results)
        if max_cycles is not None and cycles >= max_cycles:
            break
        next_start = max(next_start + interval_seconds, time.monotonic())
        stop.wait(max(0.0, next_start - time.monotonic()))
    return cycles


def start_in_thread(
    uow_factory: Callable[[], UnitOfWork], interval_seconds: float
) -> tuple[threading.Thread, threading.Event]:
    """Run the embedded loop in a daemon thread (for ``auditor serve``); set the event to stop."""
    stop = threading.Event()
    thread = threading.Thread(
        target=run_embedded,
        args=(uow_factory(), interval_seconds, stop),
        name="auditor-embedded-recompute",
        daemon=True,
    )
    thread.start()
    return thread, stop
