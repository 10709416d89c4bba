"""Issue 26 item 6: distributed /healthz watches the workers too. A fresh scan heartbeat is
not enough: with no worker heartbeat within three scan intervals it is 503, degraded (before,
it was 200 ok with every worker dead)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from auditor.config import Settings
from auditor.server import build_app
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute.worker_health import worker_beat, worker_gone
from auditor.storage.unit_of_work import UnitOfWork

INTERVAL = 0.5


def test_healthz_is_degraded_when_no_worker_answered(database_url: str, uow: UnitOfWork) -> None:
    settings = Settings(
        database_url=database_url,
        scan_interval_seconds=INTERVAL,
        broker_url="redis://127.0.0.1:1/0",
    )
    with TestClient(build_app(settings)) as client:
        # The grace runs from the API's start: pinned here, since a loaded machine can take
        # longer than three intervals between start-up and the first request.
        client.app.state.started_at = datetime.now(UTC)
        body = client.get("/healthz").json()
        assert body["workers"]["alive"] == 0 and "yet" in body["workers"]["reason"]  # grace
        client.app.state.started_at = datetime.now(UTC) - timedelta(seconds=10 * INTERVAL)
        recompute_health.beat(uow, INTERVAL)  # the scan is fine
        response = client.get("/healthz")
        assert response.status_code == 503, response.json()
        body = response.json()
        assert body["status"] == "degraded"
        assert body["workers"]["alive"] == 0
        assert "no worker has answered" in body["workers"]["reason"]

        worker_beat(uow, "celery@a", INTERVAL)
        worker_beat(uow, "celery@b", INTERVAL)
        response = client.get("/healthz")
        assert response.status_code == 200, response.json()
        assert response.json()["status"] == "ok" and response.json()["workers"]["alive"] == 2

        stale = datetime.now(UTC) - timedelta(seconds=4 * INTERVAL)
        worker_beat(uow, "celery@a", INTERVAL, now=stale)
        worker_gone(uow, "celery@b")
        response = client.get("/healthz")
        assert response.status_code == 503
        assert "within 1 s" in response.json()["workers"]["reason"]
