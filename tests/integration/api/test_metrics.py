"""GET /metrics: the database's latest values, parsed back with prometheus_client's parser."""

from __future__ import annotations

from datetime import datetime

from prometheus_client.parser import text_string_to_metric_families

from auditor.api import create_app
from tests.integration.api.conftest import make_settings


def _samples(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def test_metrics_report_latest_values_labels_and_recomputes(world) -> None:
    response = world.client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    families = _samples(response.text)
    latest = world.client.get("/api/v1/projects/alpha/snapshots/latest", headers=world.auth())
    expected = latest.json()["measures"]["kappa_s"]["value"]
    values = {
        (s.labels["project"], s.labels["metric"], s.labels["subject"], s.labels["scope"]): s.value
        for s in families["auditor_metric_value"]
    }
    assert values[("alpha", "kappa_s", "project", "cumulative")] == expected
    assert ("alpha", "self_agreement", "rater:a1", "cumulative") in values
    rater = latest.json()["raters"]["a1"]
    for name in ("self_kappa", "reliability", "random_choice"):  # issue 10: the rater model
        if rater[name]["value"] is not None:
            assert values[("alpha", name, "rater:a1", "cumulative")] == rater[name]["value"]
    assert rater["reliability"]["value"] is not None
    labels = {s.labels["project"]: s.value for s in families["auditor_labels_ingested"]}
    counts = latest.json()["n_labels"]
    assert labels["alpha"] == counts
    # A post moves the counter at the next scrape: it is read from the database.
    world.client.post(
        "/api/v1/projects/alpha/labels",
        json={"labels": [{"item": "m1", "rater": "a1", "label": "normal"}]},
        headers=world.auth(),
    )
    again = _samples(world.client.get("/metrics").text)
    assert {s.labels["project"]: s.value for s in again["auditor_labels_ingested"]}["alpha"] == (
        counts + 1
    )
    last = {
        s.labels["project"]: s.value for s in families["auditor_last_recompute_timestamp_seconds"]
    }
    computed = latest.json()["snapshot"]["computed_at"]

    assert 0 <= last["alpha"] - datetime.fromisoformat(computed).timestamp() < 5  # newest scope
    durations = families["auditor_recompute_duration_seconds"]
    assert {s.labels["scope"] for s in durations if s.labels["project"] == "alpha"} >= {
        "cumulative"
    }
    assert "auditor_alert_state" in families and "auditor_outbox_messages" in families


def test_metrics_token_when_configured(world) -> None:
    from fastapi.testclient import TestClient

    app = create_app(make_settings(world.engine_url, metrics_token="scrape-secret"))
    with TestClient(app) as client:
        assert client.get("/metrics").status_code == 401
        ok = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert ok.status_code == 200
