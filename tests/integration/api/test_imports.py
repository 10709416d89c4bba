"""Imports over HTTP (list, show, revert needs admin), the revert mark in the history, and
deleting a project: nothing of it is left in any table, the other project is untouched."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import inspect, text
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import T0


def _post(world, labels: list[dict], role: str = "ingest"):
    return world.client.post(
        "/api/v1/projects/alpha/labels", json={"labels": labels}, headers=world.auth("alpha", role)
    )


def test_batches_are_imports_and_admin_reverts_one(world) -> None:
    client = world.client
    labels = [
        {"item": f"new-{n}", "rater": "a1", "label": "normal", "labeled_at": "2024-05-03T10:00:00Z"}
        for n in range(5)
    ]
    posted = _post(world, labels)
    assert posted.status_code == 200, posted.text
    import_id = posted.json()["import_id"]
    repeated = _post(world, labels)  # same natural identities: duplicates, a record of its own
    assert (repeated.json()["inserted"], repeated.json()["duplicates"]) == (0, 5)

    listed = client.get("/api/v1/projects/alpha/imports", headers=world.auth("alpha", "read"))
    assert listed.status_code == 200
    records = listed.json()["imports"]
    mine = next(r for r in records if r["id"] == import_id)
    assert (mine["source"], mine["inserted"], mine["rows"]) == ("api", 5, 5)
    ingest_key = next(
        k
        for k in __import__("auditor.services.access.keys", fromlist=["list_keys"]).list_keys(
            UnitOfWork(make_engine(world.engine_url)), "alpha"
        )
        if k.role == "ingest"
    )
    # the key's id as the API shows it (opaque), never the global sequence
    assert mine["created_by"] == f"key {world.opaque('key', 'alpha', ingest_key.id)}"
    # Another project's import id is not found through alpha's key.
    beta = client.get("/api/v1/projects/beta/imports", headers=world.auth("beta", "read"))
    beta_id = beta.json()["imports"][0]["id"]
    other = client.get(f"/api/v1/projects/alpha/imports/{beta_id}", headers=world.auth())
    assert other.status_code == 404

    url = f"/api/v1/projects/alpha/imports/{import_id}/revert"
    for role in ("ingest", "read"):
        assert client.post(url, headers=world.auth("alpha", role)).status_code == 403
    engine = make_engine(world.engine_url)
    try:
        project_id = find_project_id(UnitOfWork(engine), "alpha")
        before = recompute_project(UnitOfWork(engine), project_id, now=T0 + timedelta(days=3))
        reverted = client.post(url, headers=world.auth("alpha", "admin"))
        assert reverted.status_code == 200, reverted.text
        assert reverted.json()["deleted"] == 5
        twice = client.post(url, headers=world.auth())
        assert twice.status_code == 409
        # the message names the import by the id the caller used, never the global sequence
        assert f"import {import_id} was already reverted" in twice.json()["error"]["message"]
        # The next recompute sees the deletion; the snapshot before it stays as it was.
        after = recompute_project(UnitOfWork(engine), project_id, now=T0 + timedelta(days=4))
        assert after.status == "written"
        with engine.connect() as connection:
            counts = dict(
                connection.execute(
                    text("SELECT id, n_labels FROM snapshots WHERE scope = 'cumulative'")
                ).all()
            )
    finally:
        engine.dispose()
    assert counts[before.written[0].id] - counts[after.written[0].id] == 5
    history = client.get(
        "/api/v1/projects/alpha/history", params={"metric": "kappa_s"}, headers=world.auth()
    )
    assert history.status_code == 200
    assert [(m["import_id"], m["labels"]) for m in history.json()["reverts"]] == [(import_id, 5)]
    # A window that ends before the revert lists none (reverts follow since/until as points).
    earlier = client.get(
        "/api/v1/projects/alpha/history",
        params={"metric": "kappa_s", "until": "2000-01-01T00:00:00Z"},
        headers=world.auth(),
    )
    assert earlier.status_code == 200 and earlier.json()["reverts"] == []


def _rows_by_project(url: str) -> dict[str, dict[int, int]]:
    """Rows per table and project id (tables without project_id: counted under -1)."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            result = {}
            for table in inspect(connection).get_table_names():
                if table == "alembic_version":
                    continue
                columns = {c["name"] for c in inspect(connection).get_columns(table)}
                key = (
                    "project_id"
                    if "project_id" in columns
                    else ("id" if table == "projects" else None)
                )
                if key is None:
                    total = connection.execute(text(f'SELECT count(*) FROM "{table}"')).scalar()
                    result[table] = {-1: int(total or 0)}
                    continue
                rows = connection.execute(
                    text(f'SELECT {key}, count(*) FROM "{table}" GROUP BY {key}')
                ).all()
                result[table] = {int(p): int(n) for p, n in rows}
            return result
    finally:
        engine.dispose()


def test_project_delete_leaves_nothing_of_it_in_any_table(world, monkeypatch) -> None:
    engine = make_engine(world.engine_url)
    try:
        alpha = find_project_id(UnitOfWork(engine), "alpha")
        beta = find_project_id(UnitOfWork(engine), "beta")
    finally:
        engine.dispose()
    before = _rows_by_project(world.engine_url)
    owned = {table for table, counts in before.items() if counts.get(alpha)}
    # The seed reaches the tables that matter (labels, snapshots, alerts, keys, imports).
    assert {"labels", "items", "snapshots", "metric_points", "alert_rules", "api_keys",
            "imports", "alert_silences"} <= owned  # fmt: skip
    monkeypatch.setenv("AUDITOR_DATABASE_URL", world.engine_url)
    get_settings.cache_clear()
    runner = CliRunner()
    try:
        refused = runner.invoke(app, ["project", "delete", "alpha"])  # not a terminal
        assert refused.exit_code == 2 and "--yes" in refused.stderr
        assert _rows_by_project(world.engine_url) == before
        done = runner.invoke(app, ["project", "delete", "alpha", "--yes"])
        assert done.exit_code == 0, done.stderr
        assert "project alpha deleted" in done.stdout
        gone = runner.invoke(app, ["project", "delete", "alpha", "--yes"])
        assert gone.exit_code == 1 and "no project 'alpha'" in gone.stderr
    finally:
        get_settings.cache_clear()
    after = _rows_by_project(world.engine_url)
    for table, counts in after.items():
        assert alpha not in counts, table
        assert counts.get(beta) == before[table].get(beta), table
    # alert_rule_channels has no project_id: alpha's one link is gone, beta's stays.
    assert after["alert_rule_channels"][-1] == before["alert_rule_channels"][-1] - 1


def test_reverting_every_import_leaves_undefined_numbers_everywhere(world) -> None:
    """Issue 13 item 2: with every import of alpha reverted over HTTP, the next recompute
    makes the latest snapshot, the history, the dashboard and the Prometheus gauges show no
    number of the deleted labels: every measure undefined, "no labels"."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from auditor.api.prometheus import DatabaseCollector
    from auditor.config import Settings
    from auditor.web import install_dashboard

    client = world.client
    records = client.get("/api/v1/projects/alpha/imports", headers=world.auth()).json()["imports"]
    assert records
    raters = client.get("/api/v1/projects/alpha/raters", headers=world.auth()).json()
    human = next(r["rater"] for r in raters["raters"] if r["kind"] == "human")
    for record in records:
        url = f"/api/v1/projects/alpha/imports/{record['id']}/revert"
        reverted = client.post(url, headers=world.auth())
        assert reverted.status_code == 200, reverted.text
        body = reverted.json()
        assert body["deleted"] == record["inserted"]
        assert body["repeats"] == {"reopened": 0, "expired": 0, "refulfilled": 0}
    engine = make_engine(world.engine_url)
    try:
        project_id = find_project_id(UnitOfWork(engine), "alpha")
        after = recompute_project(UnitOfWork(engine), project_id, now=T0 + timedelta(days=3))
        assert after.status == "written" and {w.n_labels for w in after.written} == {0}
        gauges = [
            sample.labels
            for family in DatabaseCollector(lambda: UnitOfWork(engine)).collect()
            if family.name == "auditor_metric_value"
            for sample in family.samples
        ]
    finally:
        engine.dispose()
    assert gauges and not [g for g in gauges if g["project"] == "alpha"]  # beta's remain

    latest = client.get("/api/v1/projects/alpha/snapshots/latest", headers=world.auth()).json()
    assert latest["n_labels"] == 0
    assert (latest["measures"]["kappa_s"]["value"], latest["measures"]["kappa_s"]["reason"]) == (
        None,
        "no labels",
    )
    history = client.get(
        "/api/v1/projects/alpha/history", params={"metric": "kappa_s"}, headers=world.auth()
    ).json()
    points = [p for p in history["points"] if p["scope"] == "cumulative"]
    assert points[0]["value"] is not None
    assert (points[-1]["value"], points[-1]["reason"]) == (None, "no labels")
    assert len(history["reverts"]) == len(records)

    # The dashboard's project page renders (a tokenless dashboard on this machine).
    dashboard = FastAPI()
    dashboard.state.settings = Settings(database_url=world.engine_url)
    install_dashboard(dashboard, token="")
    with TestClient(dashboard, client=("127.0.0.1", 41000)) as browser:
        page = browser.get("/projects/alpha")
        # a rater gone from the latest snapshot still has a page: the history they had
        rater_page = browser.get(f"/projects/alpha/raters/{human}")
        unknown = browser.get("/projects/alpha/raters/nobody")
    assert rater_page.status_code == 200 and "<svg" in rater_page.text and human in rater_page.text
    assert 'data-empty="latest"' in rater_page.text
    assert unknown.status_code == 404
    assert page.status_code == 200
    assert "no labels" in page.text
    counts = " ".join(page.text.split())  # the template breaks the line
    assert "0 labels of 0 items by 0 raters in 0 sessions" in counts
    # each revert listed under the charts; a dotted line on them where it fell between snapshots
    assert page.text.count("data-revert=") == len(records)
    assert "data-mark=" in page.text
