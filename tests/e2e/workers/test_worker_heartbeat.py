"""A real Celery worker writes its heartbeat row while it runs (distributed /healthz counts
those rows, issue 26 item 6), deletes it when it stops cleanly, and a killed worker's row goes
stale."""

from __future__ import annotations

import signal
import time
from datetime import UTC, datetime, timedelta

import psycopg

from tests.e2e.workers.conftest import SCAN_INTERVAL, Cluster, _libpq, wait_for


def _worker_rows(url: str) -> dict[str, datetime]:
    with psycopg.connect(_libpq(url)) as connection:
        rows = connection.execute(
            "SELECT name, beat_at FROM scheduler_heartbeats WHERE name LIKE 'worker:%'"
        ).fetchall()
    return {name: datetime.fromtimestamp(int(at) / 1e6, UTC) for name, at in rows}


def test_a_worker_beats_while_it_runs(cluster: Cluster) -> None:
    first = cluster.worker("hb1")
    rows = wait_for(lambda: _worker_rows(cluster.database_url), 30, "the worker's heartbeat")
    (name,) = rows
    assert name.startswith("worker:hb1@")
    seen = rows[name]
    wait_for(lambda: _worker_rows(cluster.database_url).get(name, seen) > seen, 30, "a new beat")

    first.popen.send_signal(signal.SIGTERM)  # a clean stop takes the row with it
    first.popen.wait(30)
    wait_for(lambda: name not in _worker_rows(cluster.database_url), 30, "the row deleted")

    second = cluster.worker("hb2")
    wait_for(lambda: _worker_rows(cluster.database_url), 30, "the second worker's heartbeat")
    second.kill()  # SIGKILL: the row stays, and goes stale
    (beat_at,) = _worker_rows(cluster.database_url).values()
    time.sleep(3.5 * SCAN_INTERVAL)
    assert list(_worker_rows(cluster.database_url).values()) == [beat_at]
    assert datetime.now(UTC) - beat_at > timedelta(seconds=3 * SCAN_INTERVAL)
