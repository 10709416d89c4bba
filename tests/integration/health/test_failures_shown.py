"""Issue 11 item 2: a recorded recompute failure shows in `auditor project show`, /metrics and
the dashboard, and a success ends the failing state while keeping the count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from auditor.cli import app as cli_app
from auditor.config import Settings, get_settings
from auditor.server import build_app
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute.recompute import find_project_id, recompute_project


def _failed_twice(uow) -> int:
    create_project(uow, "flaky", ["yes", "no"])
    project_id = find_project_id(uow, "flaky")
    for _ in range(2):
        recompute_health.record_failure(
            uow, project_id, OverflowError("date value out of range"), 60
        )
    return project_id


def test_failures_in_project_show_metrics_and_dashboard(uow, database_url, monkeypatch):
    project_id = _failed_twice(uow)
    (row,) = recompute_health.failures(uow, project_id)
    assert (row.failures, row.consecutive) == (2, 2)
    assert row.retry_after - row.last_failed_at == timedelta(seconds=120)  # 2nd: 2 intervals

    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        shown = CliRunner().invoke(cli_app, ["project", "show", "flaky"])
    finally:
        get_settings.cache_clear()
    assert shown.exit_code == 0, shown.stderr
    assert "recompute  2 failures (failing, next try after" in shown.stdout
    assert "OverflowError: date value out of range" in shown.stdout

    settings = Settings(database_url=database_url, broker_url="redis://127.0.0.1:1/0")
    with TestClient(build_app(settings), client=("127.0.0.1", 50000)) as client:
        metrics = client.get("/metrics").text
        assert 'auditor_recompute_failures_total{project="flaky"} 2.0' in metrics
        assert 'auditor_recompute_failing{project="flaky"} 1.0' in metrics
        page = client.get("/")
        assert page.status_code == 200
        assert 'data-failing="flaky"' in page.text

        # A success ends the run; the count stays.
        at = datetime.now(UTC) - timedelta(hours=1)
        rows = [{"item": "i", "rater": r, "label": "yes", "labeled_at": at} for r in "ab"]
        ingest_labels(uow, "flaky", rows)
        assert recompute_project(uow, project_id).status == "written"
        metrics = client.get("/metrics").text
        assert 'auditor_recompute_failures_total{project="flaky"} 2.0' in metrics
        assert 'auditor_recompute_failing{project="flaky"} 0.0' in metrics
        assert 'data-failing="flaky"' not in client.get("/").text


def test_the_scheduler_prunes_expired_idempotency_records(uow, engine) -> None:
    from sqlalchemy import text

    from auditor.ingestion.batch import RawBatch
    from auditor.services.ingest.idempotent_posts import post_labels
    from auditor.services.recompute.embedded import run_cycle

    create_project(uow, "idem", ["yes", "no"])
    for key in ("old", "new"):
        batch = RawBatch(rows=[1], item=[key], rater=["r"], label=["yes"])
        post_labels(uow, "idem", batch, idempotency_key=key, request_hash=key)
    eight_days = int(timedelta(days=8).total_seconds() * 1_000_000)
    with engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE idempotency_records SET created_at = created_at - :d"
                " WHERE idempotency_key = 'old'"
            ),
            {"d": eight_days},
        )
    run_cycle(uow)  # default expiry: 7 days
    with engine.connect() as connection:
        keys = connection.execute(text("SELECT idempotency_key FROM idempotency_records")).scalars()
        assert sorted(keys) == ["new"]
