"""Who may touch Label Studio's labels, and what a refused webhook call leaves behind.

- the webhook route takes only a ``label-studio`` key, and that key opens nothing else;
- other routes may not write ``label-studio:`` client keys (the labels API, a CSV import) nor
  revert the imports the webhook and the sync wrote;
- every refused call of the route (401, 403, 422) is counted for its project: /metrics, the
  cumulative snapshot's ``label_studio_rejected`` point, the default rule; a sync brings the
  count back to 0;
- ``auditor import`` of an export reads with the project's settings: a different
  ``--item-field`` is refused, naming the settings command.
"""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from auditor.api import create_app
from auditor.cli import app as cli
from auditor.config import Settings, get_settings
from auditor.errors import Conflict
from auditor.ingestion.errors import IngestRejected
from auditor.ingestion.readers import LabelFileReader
from auditor.services.access.keys import create_key
from auditor.services.alerts.reads import alert_status
from auditor.services.alerts.rules import install_default_rules, install_label_studio_rule
from auditor.services.ingest.imports import list_imports, revert_import
from auditor.services.ingest.labels import import_batches, ingest_labels
from auditor.services.label_studio.settings import update_settings
from auditor.services.label_studio.sync import sync_project
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.web import install_dashboard

PATH = "/api/v1/projects/pets/integrations/label-studio"
EVENT = {
    "action": "ANNOTATION_CREATED",
    "annotation": {"id": 7, "task": 5, "completed_by": 3, "created_at": "2026-11-27T09:00:00Z",
                   "result": [{"type": "choices", "from_name": "pet",
                               "value": {"choices": ["dog"]}}]},
}  # fmt: skip


def _app(engine):  # type: ignore[no-untyped-def]
    url = engine.url.render_as_string(hide_password=False)
    settings = Settings(database_url=url, broker_url=None, metrics_token="scrape")  # type: ignore[arg-type]
    return create_app(settings)


def _dashboard_page(engine) -> str:  # type: ignore[no-untyped-def]
    url = engine.url.render_as_string(hide_password=False)
    dashboard = FastAPI()
    dashboard.state.settings = Settings(database_url=url)  # type: ignore[arg-type]
    install_dashboard(dashboard, token="")
    with TestClient(dashboard, client=("127.0.0.1", 41000)) as client:
        page = client.get("/projects/pets")
    assert page.status_code == 200, page.text
    return page.text


def test_refused_calls_are_counted_shown_and_recovered_by_a_sync(uow, engine) -> None:
    create_project(uow, "pets", ["cat", "dog"])
    ingest_labels(uow, "pets", [{"item": "x", "rater": "r", "label": "cat"}])
    webhook = create_key(uow, "pets", "label-studio")[1]
    reader = create_key(uow, "pets", "read")[1]
    assert install_label_studio_rule(uow, "pets") is not None
    assert install_label_studio_rule(uow, "pets") is None  # once
    fish = json.loads(json.dumps(EVENT).replace('"dog"', '"fish"'))
    with TestClient(_app(engine)) as client:
        assert client.post(PATH, json=EVENT).status_code == 401
        wrong = {"Authorization": f"Bearer {reader}"}
        assert client.post(PATH, json=EVENT, headers=wrong).status_code == 403
        right = {"Authorization": f"Bearer {webhook}"}
        assert client.post(PATH, json=fish, headers=right).status_code == 422
        assert client.post(PATH, json=EVENT, headers=right).status_code == 200
        # the webhook's key opens nothing else, not even "which project is this key's"
        assert client.get("/api/v1/key", headers=right).status_code == 403
        assert client.get("/api/v1/projects/pets", headers=right).status_code == 403
        # another project's slug is not counted anywhere (it does not exist)
        assert client.post(PATH.replace("pets", "nope"), json=EVENT).status_code == 401
        metrics = client.get("/metrics", headers={"Authorization": "Bearer scrape"}).text
    for status, count in (("401", 1), ("403", 1), ("422", 1)):
        line = f'auditor_label_studio_rejected_total{{project="pets",status="{status}"}}'
        assert f"{line} {count:.1f}" in metrics
    assert 'auditor_label_studio_rejected_since_sync{project="pets"} 3.0' in metrics
    assert 'project="nope"' not in metrics
    # the next snapshot shows the count, and the default rule fires on it
    recompute_project(uow, find_project_id(uow, "pets"))
    (state,) = [s for s in alert_status(uow, "pets") if s.rule_id.endswith("rejected")]
    assert (state.status, state.value) == ("firing", 3.0)
    page = _dashboard_page(engine)
    assert 'data-label-studio="refused"' in page
    assert "3 webhook calls" in page and "1 answered 401, 1 answered 403, 1 answered 422" in page
    assert "auditor label-studio sync pets" in page
    # a sync recovers what was lost: the count starts again, the rule resolves
    sync_project(uow, "pets", [])
    recompute_project(uow, find_project_id(uow, "pets"), force=True)
    (state,) = [s for s in alert_status(uow, "pets") if s.rule_id.endswith("rejected")]
    assert (state.status, state.value) == ("ok", 0.0)
    assert 'data-label-studio="ok"' in _dashboard_page(engine)


def test_other_routes_cannot_write_or_revert_label_studio_labels(uow, tmp_path) -> None:
    create_project(uow, "pets", ["cat", "dog"])
    with pytest.raises(IngestRejected) as refused:
        ingest_labels(uow, "pets", [{"item": "x", "rater": "r", "label": "cat",
                                     "key": "label-studio:12"}])  # fmt: skip
    assert refused.value.errors[0].field == "key"
    csv = tmp_path / "labels.csv"
    csv.write_text("item,rater,label,key\nx,r,cat,label-studio:13\ny,r,dog,mine-1\n")
    result = import_batches(uow, "pets", LabelFileReader(csv, 100))
    assert result.rejected and [(e.row, e.field) for e in result.errors] == [(2, "key")]
    # the webhook's and the sync's imports follow Label Studio: not reverted by hand
    sync_project(uow, "pets", [{"id": 5, "data": {}, "annotations": [EVENT["annotation"]]}])
    (written,) = list_imports(uow, "pets")
    with pytest.raises(Conflict, match="label-studio sync"):
        revert_import(uow, "pets", written.id)


def test_defaults_include_the_rule_only_for_a_project_that_takes_the_webhook(uow) -> None:
    create_project(uow, "plain", ["a", "b"])
    create_project(uow, "pets", ["cat", "dog"])
    update_settings(uow, "pets", item_field="data.case")
    plain = {r.id for r in install_default_rules(uow, "plain")}
    pets = {r.id for r in install_default_rules(uow, "pets")}
    assert "pets:default:label_studio_rejected" in pets
    assert not any("label_studio" in r for r in plain)


def test_the_commands_settings_import_and_sync(monkeypatch, uow, database_url, tmp_path) -> None:
    create_project(uow, "pets", ["cat", "dog"])
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    runner = CliRunner()
    export = tmp_path / "export.json"
    tasks = [{"id": 5, "data": {"case": "c-5"}, "annotations": [EVENT["annotation"]]}]
    export.write_text(json.dumps(tasks))
    try:
        shown = runner.invoke(cli, ["label-studio", "settings", "pets", "--item-field",
                                    "data.case", "--token", "secret-token"])  # fmt: skip
        assert shown.exit_code == 0, shown.output
        assert "data.case" in shown.stdout and "token        set" in shown.stdout
        assert "secret-token" not in shown.stdout
        other = runner.invoke(cli, ["import", "pets", str(export), "--item-field", "data.x"])
        assert other.exit_code == 1
        assert "auditor label-studio settings pets --item-field data.x" in other.stderr
        done = runner.invoke(cli, ["import", "pets", str(export)])
        assert done.exit_code == 0, done.output
        synced = runner.invoke(cli, ["label-studio", "sync", "pets", "--export", str(export)])
        assert synced.exit_code == 0, synced.output
        assert "0 created, 0 updated, 0 deleted, 1 unchanged" in synced.stdout
        bad = runner.invoke(cli, ["label-studio", "settings", "pets", "--item-field", "case"])
        assert bad.exit_code == 1 and "data.<key>" in bad.stderr
        key = runner.invoke(cli, ["keys", "create", "pets", "--role", "label-studio"])
        assert key.exit_code == 0 and "default:label_studio_rejected" in key.stderr
    finally:
        get_settings.cache_clear()
