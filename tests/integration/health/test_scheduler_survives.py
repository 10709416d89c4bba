"""Issue 11 items 2 and 3: a failing project is recorded and backed off, the embedded loop
goes on with the others, and /healthz tells the truth about the scheduler."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from auditor.config import Settings
from auditor.server import build_app
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute import recompute as audit
from auditor.services.recompute.embedded import start_in_thread
from auditor.services.recompute.recompute import find_project_id
from auditor.services.recompute.worker_health import worker_beat
from auditor.storage.unit_of_work import UnitOfWork
from tests.timing import scaled

# The scan interval on a quiet machine; each test stretches it by the measured slowness
# (tests/timing.py), so a loaded machine does not read as a dead or stale scheduler.
INTERVAL = 0.2


def _labels(n: int = 6) -> list[dict]:
    at = datetime.now(UTC) - timedelta(hours=1)
    return [
        {"item": f"i{i}", "rater": r, "label": "yes" if (i + k) % 3 else "no", "labeled_at": at}
        for i in range(n)
        for k, r in enumerate(("a", "b", "c"))
    ]


@pytest.fixture
def two_projects(uow: UnitOfWork) -> tuple[int, int]:
    for slug in ("broken", "fine"):
        create_project(uow, slug, ["yes", "no"], recompute_interval_seconds=1)
        ingest_labels(uow, slug, _labels())
    return find_project_id(uow, "broken"), find_project_id(uow, "fine")


@pytest.fixture
def overflow_in(monkeypatch: pytest.MonkeyPatch):
    """Alert evaluation of the chosen projects raises OverflowError (as seen in the field)."""
    failing: set[int] = set()

    evaluate = audit.evaluate_snapshots

    def failing_evaluation(uow, project_id, written) -> dict[str, int]:
        if project_id in failing:
            raise OverflowError("date value out of range")
        return evaluate(uow, project_id, written)

    monkeypatch.setattr(audit, "evaluate_snapshots", failing_evaluation)
    return failing


def _snapshot_count(uow: UnitOfWork, project_id: int) -> int:
    with uow:
        return sum(uow.snapshots.count_snapshots(project_id).values())


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + scaled(timeout)  # a bound for a quiet machine, stretched
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_a_failing_project_is_recorded_backed_off_and_never_stops_the_loop(
    uow, engine, two_projects, overflow_in
):
    broken, fine = two_projects
    overflow_in.add(broken)
    interval = scaled(INTERVAL)
    thread, stop, health = start_in_thread(lambda: UnitOfWork(engine), interval)
    try:
        _wait(lambda: _snapshot_count(uow, fine) > 0, 20, "snapshots of the healthy project")
        _wait(lambda: recompute_health.failures(uow, broken), 20, "the failure record")
        # Let the loop run for a while: failures back off (1, 2, 4, 8 intervals), no hot loop.
        cycles_before = health.last_cycle_at
        time.sleep(12 * interval)
        assert thread.is_alive()
        assert health.last_cycle_at != cycles_before
        (record,) = recompute_health.failures(uow, broken)
        assert record.slug == "broken"
        assert "OverflowError: date value out of range" in record.last_error
        assert 1 <= record.failures <= 4, record
        assert record.retry_after is not None and record.retry_after > record.last_failed_at
        assert _snapshot_count(uow, broken) == 0  # nothing partial
        report = health.report()
        assert report.healthy and report.alive
        assert "project broken" in (report.last_error or "")

        overflow_in.clear()  # the fault is fixed: the next retry succeeds and ends the run
        _wait(lambda: _snapshot_count(uow, broken) > 0, 20 * interval * 10, "the retry")
        (record,) = recompute_health.failures(uow, broken)
        assert record.consecutive == 0 and record.retry_after is None
        assert record.failures >= 1  # the history stays
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_backoff_grows_to_ten_scan_intervals():
    assert [recompute_health.backoff(n, 60).total_seconds() / 60 for n in range(1, 8)] == [
        1, 2, 4, 8, 10, 10, 10,
    ]  # fmt: skip


def _settings(database_url: str, interval: float = INTERVAL, **extra: object) -> Settings:
    return Settings(database_url=database_url, scan_interval_seconds=interval, **extra)


def test_healthz_embedded_ok_then_503_when_the_thread_is_dead(database_url, two_projects):
    with TestClient(build_app(_settings(database_url, scaled(INTERVAL)))) as client:
        app = client.app
        _wait(lambda: app.state.scheduler_health.last_cycle_at is not None, 20, "a cycle")
        body = client.get("/healthz").json()
        assert body["status"] == "ok", body
        assert body["scheduler"]["alive"] is True
        assert body["scheduler"]["last_cycle_at"] is not None
        dead = threading.Thread(target=lambda: None)
        dead.start()
        dead.join()
        app.state.scheduler_health.thread = dead  # what a crashed loop looks like
        response = client.get("/healthz")
        assert response.status_code == 503
        assert response.json()["status"] == "degraded"
        assert response.json()["scheduler"]["alive"] is False


def test_healthz_embedded_degraded_while_a_project_fails(database_url, two_projects, overflow_in):
    overflow_in.add(two_projects[0])
    # A 1 s scan (stale after 3 s): at 0.2 s one slow cycle on a loaded CI machine read as a
    # dead scheduler (503), which is not what this test is about.
    settings = Settings(database_url=database_url, scan_interval_seconds=scaled(1.0))
    with TestClient(build_app(settings)) as client:
        health = client.app.state.scheduler_health
        _wait(lambda: health.last_error is not None, 20, "the failure")
        _wait(lambda: client.get("/healthz").json()["scheduler"]["failing_projects"], 20, "count")
        response = client.get("/healthz")
        assert response.status_code == 200
        assert response.json()["status"] == "degraded"
        assert "OverflowError" in response.json()["scheduler"]["last_error"]


def test_healthz_distributed_reads_the_beat_heartbeat(database_url, uow):
    interval = scaled(INTERVAL)  # a beat older than ~3 intervals is stale: at load, stretched
    settings = _settings(database_url, interval, broker_url="redis://127.0.0.1:1/0")
    with TestClient(build_app(settings)) as client:
        assert not hasattr(client.app.state, "scheduler_health")
        assert client.get("/healthz").status_code == 200  # grace: beat may be starting
        client.app.state.started_at = datetime.now(UTC) - timedelta(seconds=10 * interval)
        response = client.get("/healthz")
        assert response.status_code == 503, response.json()
        assert response.json()["scheduler"]["reason"]
        recompute_health.beat(uow, interval)
        worker_beat(uow, "celery@test", 60)  # a worker answers too (test_worker_heartbeat)
        body = client.get("/healthz").json()
        assert body["status"] == "ok" and body["scheduler"]["mode"] == "distributed", body
        stale = datetime.now(UTC) - timedelta(seconds=4 * interval)
        recompute_health.beat(uow, interval, now=stale)
        assert client.get("/healthz").status_code == 503
        recompute_health.beat(uow, interval, RuntimeError("scan broke"))
        body = client.get("/healthz").json()
        assert body["scheduler"]["last_error"] == "RuntimeError: scan broke"


def test_the_loop_outlives_a_failing_scan(uow, engine, two_projects, monkeypatch):
    """A scan that raises (the database was locked, a bug) is logged and kept in the health;
    the next cycle scans again."""
    from auditor.services.recompute import embedded

    real_scan = embedded.scan_dirty_projects
    calls: list[int] = []

    def flaky_scan(*args, **kwargs):
        calls.append(1)
        if len(calls) <= 2:
            raise RuntimeError("database is locked")
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(embedded, "scan_dirty_projects", flaky_scan)
    thread, stop, health = start_in_thread(lambda: UnitOfWork(engine), scaled(INTERVAL))
    try:
        _wait(lambda: _snapshot_count(uow, two_projects[1]) > 0, 20, "a snapshot after the faults")
        assert thread.is_alive()
        assert health.last_error == "scan: RuntimeError: database is locked"
        _wait(lambda: health.report().errors_last_cycle == 0, 20, "a clean cycle")
        assert not health.report().degraded
    finally:
        stop.set()
        thread.join(10)
