"""GET /metrics: the database's latest values, parsed back with prometheus_client's parser."""

from __future__ import annotations

from datetime import datetime

import pytest
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
    # the metric catalogue: which way each metric is better
    info = {s.labels["metric"]: s.labels for s in families["auditor_metric_info"]}
    assert info["random_choice"]["better"] == "lower" and info["kappa_s"]["better"] == "higher"
    assert info["self_kappa"]["subjects"] == "rater" and info["rho"]["band"] == "Krippendorff"


def test_metrics_token_when_configured(world) -> None:
    from fastapi.testclient import TestClient

    app = create_app(make_settings(world.engine_url, metrics_token="scrape-secret"))
    with TestClient(app) as client:
        assert client.get("/metrics").status_code == 401
        ok = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert ok.status_code == 200


def _client(world, peer: str, **settings: object):
    from fastapi.testclient import TestClient

    app = create_app(make_settings(world.engine_url, **settings))
    return TestClient(app, client=(peer, 40000))


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Real-IP": "127.0.0.1"},  # a same-host proxy that says the client is local: unproven
        {"X-Forwarded-For": "203.0.113.9"},
        {"Forwarded": "for=203.0.113.9;proto=https"},
        {"Forwarded": 'for="[::1]"'},
    ],
)
def test_without_a_token_a_relayed_request_is_refused_even_from_loopback(world, headers) -> None:
    with _client(world, "127.0.0.1") as client:
        assert client.get("/metrics").status_code == 200  # loopback, not relayed
        refused = client.get("/metrics", headers=headers)
        assert refused.status_code == 403, refused.text
        assert "AUDITOR_TRUSTED_PROXIES" in refused.json()["error"]["message"]
        assert "auditor_metric_value" not in refused.text


def test_without_a_token_remote_peers_are_refused(world) -> None:
    for peer in ("10.0.0.5", "192.0.2.7", "::ffff:10.0.0.1", "testclient"):
        with _client(world, peer) as client:
            assert client.get("/metrics").status_code == 403, peer


def test_a_trusted_proxy_may_relay_a_local_client_only(world) -> None:
    with _client(world, "10.0.0.2", trusted_proxies="10.0.0.0/24") as client:
        assert client.get("/metrics", headers={"X-Real-IP": "127.0.0.1"}).status_code == 200
        # every client any header names must be local: a chain through a loopback hop from a
        # remote client is remote, and so is a forged loopback beside a remote address
        chain = {"X-Forwarded-For": "198.51.100.1, 127.0.0.1"}
        assert client.get("/metrics", headers=chain).status_code == 403
        forged = {"Forwarded": "for=127.0.0.1", "X-Forwarded-For": "203.0.113.5"}
        assert client.get("/metrics", headers=forged).status_code == 403
        local = {"Forwarded": 'for="[::1]"', "X-Forwarded-For": "127.0.0.1"}
        assert client.get("/metrics", headers=local).status_code == 200
        remote = client.get("/metrics", headers={"X-Forwarded-For": "198.51.100.1"})
        assert remote.status_code == 403
        assert client.get("/metrics").status_code == 403  # the proxy itself is not loopback


def test_the_token_needs_the_bearer_scheme(world) -> None:
    with _client(world, "10.0.0.5", metrics_token="scrape-secret") as client:
        assert client.get("/metrics", headers={"Authorization": "scrape-secret"}).status_code == 401
        basic = {"Authorization": "Basic scrape-secret"}
        assert client.get("/metrics", headers=basic).status_code == 401
        ok = client.get("/metrics", headers={"Authorization": "bearer scrape-secret"})
        assert ok.status_code == 200
    with _client(world, "127.0.0.1", metrics_token="scrape-secret") as client:
        assert client.get("/metrics").status_code == 401  # a token set: loopback needs it too


@pytest.mark.e2e
def test_through_a_real_server_a_same_host_proxy_header_is_not_believed(database_url) -> None:
    import httpx

    from tests.integration.api.conftest import serving

    with serving(database_url) as (base, _process):
        assert httpx.get(f"{base}/metrics").status_code == 200  # loopback, not relayed
        for header in ({"X-Forwarded-For": "127.0.0.1"}, {"X-Real-IP": "127.0.0.1"}):
            answer = httpx.get(f"{base}/metrics", headers=header)
            assert answer.status_code == 403, answer.text
            assert httpx.get(base + "/", headers=header).status_code == 403  # the dashboard
