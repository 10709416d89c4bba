"""Issue 4 item 7: the Celery deployment under faults, with real processes.

Scan interval 1 s; the recompute is slowed with the test-only AUDITOR_TEST_RECOMPUTE_DELAY
where a test needs to act in the middle of one.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime, timedelta

import numpy as np
import psycopg
import pytest
from sqlalchemy import text

from auditor.config import Settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id
from auditor.snapshots.points import points_from_stats_dict
from auditor.snapshots.scopes import tick_for
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.e2e.workers.conftest import (
    _libpq,
    drop_prefixed_keys,
    run_intervals,
    wait_for,
)
from workers.celery_app import RECOMPUTE_TASK, create_app

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(180)]

CATEGORIES = ["a", "b", "c"]


class Project:
    def __init__(self, url: str, slug: str, interval: int) -> None:
        self.engine = make_engine(url)
        self.uow = UnitOfWork(self.engine)
        self.slug = slug
        create_project(self.uow, slug, CATEGORIES, recompute_interval_seconds=interval)
        self.id = find_project_id(self.uow, slug)
        self.batches = 0

    def ingest(self, n_items: int = 40, raters: int = 4) -> int:
        rng = np.random.default_rng(self.batches)
        now = datetime.now(UTC) - timedelta(minutes=5)
        rows = [
            {
                "item": f"b{self.batches}-i{i}",
                "rater": f"r{r}",
                "label": CATEGORIES[int(rng.integers(3))],
                "labeled_at": now + timedelta(seconds=i),
            }
            for i in range(n_items)
            for r in range(raters)
        ]
        self.batches += 1
        result = ingest_labels(self.uow, self.slug, rows)
        return int(result.max_label_id)

    def snapshots(self) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(
                text(
                    "SELECT s.id, s.scope, s.tick, s.watermark, s.result,"
                    # the planner's coverage points (repeats_*, repeat_coverage; cumulative
                    # only) sit beside the points of the measures in ``result``
                    " (SELECT count(*) FROM metric_points p WHERE p.snapshot_id = s.id"
                    "  AND p.metric NOT LIKE 'repeats%' AND p.metric <> 'repeat_coverage')"
                    " AS points"
                    " FROM snapshots s WHERE s.project_id = :p ORDER BY s.id"
                ),
                {"p": self.id},
            ).mappings()
            return [dict(r) for r in rows]

    def covered(self, watermark: int) -> bool:
        return any(
            s["scope"] == "cumulative" and s["watermark"] >= watermark for s in self.snapshots()
        )


def assert_complete_and_unique(snapshots: list[dict]) -> None:
    slots = [(s["scope"], s["tick"]) for s in snapshots]
    assert len(slots) == len(set(slots)), f"two snapshots in one slot: {slots}"
    for s in snapshots:
        assert s["points"] == len(points_from_stats_dict(s["result"])) > 0, s["id"]


@pytest.fixture
def client(cluster):
    app = create_app(Settings(broker_url=cluster.broker_url))
    app.conf.broker_transport_options = {"global_keyprefix": cluster.prefix}
    yield app
    app.close()


def test_labels_reach_a_snapshot_within_two_scan_intervals(cluster, pg_url):
    project = Project(pg_url, "fresh", interval=1)
    worker = cluster.worker("w1")
    beat = cluster.beat("beat1")
    wait_for(lambda: "auditor.scan" in worker.text(), 10, "the first scan")
    delays = []
    for _ in range(3):
        watermark = project.ingest()
        committed = time.monotonic()
        wait_for(lambda w=watermark: project.covered(w), 4 * cluster.scan_interval, "a snapshot")
        delays.append(time.monotonic() - committed)
        time.sleep(0.3)
    assert max(delays) <= 2 * cluster.scan_interval, delays
    assert_complete_and_unique(project.snapshots())
    assert "Traceback" not in worker.text() + beat.text()


def test_worker_killed_mid_recompute_leaves_nothing_then_one_snapshot(cluster, pg_url, client):
    project = Project(pg_url, "killed", interval=3600)
    project.ingest()
    tick = tick_for(datetime.now(UTC), 3600)
    slow = cluster.worker("slow", AUDITOR_TEST_RECOMPUTE_DELAY="4")
    client.send_task(RECOMPUTE_TASK, args=(project.id, tick))
    wait_for(lambda: "recompute running" in slow.text(), 20, "the recompute to start")
    time.sleep(0.5)
    slow.kill()
    with project.engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM snapshots")).scalar_one() == 0
        assert c.execute(text("SELECT count(*) FROM metric_points")).scalar_one() == 0
    # No beat: the redelivered message (visibility timeout 5 s) is what finishes the job.
    fresh = cluster.worker("fresh")
    wait_for(lambda: len(project.snapshots()) == 2, 40, "the redelivered recompute")
    snapshots = project.snapshots()
    assert {(s["scope"], s["tick"]) for s in snapshots} == {("cumulative", tick), ("7d", tick)}
    assert_complete_and_unique(snapshots)
    # a second redelivery or a duplicate changes nothing
    client.send_task(RECOMPUTE_TASK, args=(project.id, tick))
    wait_for(lambda: fresh.text().count("status=") >= 2, 20, "the duplicate to run")
    assert len(project.snapshots()) == 2


def test_ten_enqueues_two_workers_never_overlap_and_write_once(cluster, pg_url, client):
    project = Project(pg_url, "crowded", interval=3600)
    project.ingest()
    tick = tick_for(datetime.now(UTC), 3600)
    workers = [cluster.worker(f"w{i}", AUDITOR_TEST_RECOMPUTE_DELAY="1.5") for i in range(2)]
    for _ in range(10):
        client.send_task(RECOMPUTE_TASK, args=(project.id, tick))
    wait_for(lambda: sum(w.text().count("status=") for w in workers) >= 10, 60, "ten task runs")
    spans = run_intervals(*workers)
    assert spans, "no recompute ran under the lock"
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start, f"overlapping recomputes: {spans}"
    assert sum("status=locked" in w.text() for w in workers) >= 1, "the lock was never contended"
    snapshots = project.snapshots()
    assert len(snapshots) == 2
    assert_complete_and_unique(snapshots)


def test_two_beats_give_one_snapshot_per_project_per_tick(cluster, pg_url):
    # Recomputes last two scan intervals and there is one worker more than projects, so while
    # the recomputes run a free worker runs the scans of both beats, finds a project still
    # dirty in the same tick and enqueues the same (project, tick) again: the duplicates this
    # test is about. (With every worker busy, the scans queued behind the recomputes and saw
    # the finished snapshots: no duplicate, and the test proved nothing.)
    projects = [Project(pg_url, f"twin{i}", interval=4) for i in range(2)]
    workers = [cluster.worker(f"w{i}", AUDITOR_TEST_RECOMPUTE_DELAY="2.0") for i in range(3)]
    cluster.beat("beat1")
    cluster.beat("beat2")
    deadline = time.monotonic() + 13
    watermarks = {}
    while time.monotonic() < deadline:
        for p in projects:
            watermarks[p.id] = p.ingest(n_items=10)
        time.sleep(0.5)
    for p in projects:
        wait_for(lambda p=p: p.covered(watermarks[p.id]), 30, f"{p.slug} to catch up")
    log = "".join(w.text() for w in workers)
    slots: dict[str, int] = {}
    for line in log.splitlines():
        if "enqueued recompute " in line:
            key = line.split("enqueued recompute ")[1].split(" (")[0]
            slots[key] = slots.get(key, 0) + 1
    assert max(slots.values()) >= 2, f"no (project, tick) was enqueued twice: {slots}"
    for p in projects:
        snapshots = p.snapshots()
        assert len({s["tick"] for s in snapshots}) >= 3
        assert_complete_and_unique(snapshots)
    assert "Traceback" not in log


def test_redis_data_lost_snapshots_resume_at_the_next_scan(cluster, pg_url, redis_client):
    project = Project(pg_url, "amnesia", interval=1)
    cluster.worker("w1")
    cluster.beat("beat1")
    first = project.ingest()
    wait_for(lambda: project.covered(first), 10, "the first snapshot")
    # What a Redis restart without persistence does to this deployment: every key is gone
    # and every client connection is cut. (The server is shared, so this run's keys are
    # deleted and its own connections killed, rather than restarting the server.)
    assert drop_prefixed_keys(redis_client, cluster.prefix) > 0
    for address in cluster.redis_connections():
        redis_client.execute_command("CLIENT", "KILL", "ADDR", address)
    second = project.ingest()
    wait_for(lambda: project.covered(second), 30, "a snapshot after the Redis loss")
    assert_complete_and_unique(project.snapshots())


def test_postgres_backends_terminated_mid_recompute_retry_and_succeed(cluster, pg_url, client):
    project = Project(pg_url, "terminated", interval=3600)
    project.ingest()
    tick = tick_for(datetime.now(UTC), 3600)
    worker = cluster.worker("w1", AUDITOR_TEST_RECOMPUTE_DELAY="2")
    client.send_task(RECOMPUTE_TASK, args=(project.id, tick))
    wait_for(lambda: "recompute running" in worker.text(), 20, "the recompute to start")
    project.engine.dispose()
    database = project.engine.url.database
    with psycopg.connect(_libpq(pg_url), autocommit=True) as admin:
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchone()[0]
    assert killed >= 1
    wait_for(lambda: len(project.snapshots()) == 2, 40, "the retried recompute")
    log = worker.text()
    assert "Retry in" in log and "RecomputeInterrupted" in log, log[-3000:]
    assert "status=written" in log
    assert_complete_and_unique(project.snapshots())
