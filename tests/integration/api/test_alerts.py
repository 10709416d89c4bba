"""Alert rules, channels, states, history and silences through the HTTP API, and the
settings update, on SQLite and PostgreSQL (the ``world`` fixture is parametrized)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from auditor.services.alerts.silences import list_silences
from auditor.services.ingest.labels import ingest_labels
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import T0

BASE = "/api/v1/projects/alpha"
RULE = {"metric": "rho", "condition": "not_confidently_above", "threshold": 0.667}
PUBLIC_URL = "https://8.8.8.8/hook"  # an IP literal: checked without DNS


def _error(response, status: int) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def _fields(error: dict) -> list[str]:
    """The fields the details name: a service's ``field`` or a schema error's location."""
    return [d.get("field") or d["location"][-1] for d in error["details"]]


def test_rule_lifecycle(world) -> None:
    client, admin = world.client, world.auth()
    created = client.post(f"{BASE}/alerts/rules", json={**RULE, "name": "rho-low"}, headers=admin)
    assert created.status_code == 201, created.text
    rule = created.json()
    assert rule["id"] == "alpha:rho-low" and rule["threshold"] == 0.667 and rule["enabled"]
    assert rule["subject"] == "project" and rule["repeat_interval_seconds"] == 86400

    for ref in ("rho-low", "alpha:rho-low"):
        assert client.get(f"{BASE}/alerts/rules/{ref}", headers=admin).json() == rule
    listed = client.get(f"{BASE}/alerts/rules", headers=world.auth("alpha", "read")).json()
    assert {r["id"] for r in listed["rules"]} == {"alpha:a-rule", "alpha:rho-low"}

    again = client.post(f"{BASE}/alerts/rules", json={**RULE, "name": "rho-low"}, headers=admin)
    assert _error(again, 409)["code"] == "conflict"

    disabled = client.post(f"{BASE}/alerts/rules/rho-low/disable", headers=admin)
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    enabled = client.post(f"{BASE}/alerts/rules/alpha:rho-low/enable", headers=admin)
    assert enabled.json()["enabled"] is True

    assert client.delete(f"{BASE}/alerts/rules/rho-low", headers=admin).status_code == 204
    _error(client.get(f"{BASE}/alerts/rules/rho-low", headers=admin), 404)
    _error(client.delete(f"{BASE}/alerts/rules/rho-low", headers=admin), 404)


def test_drop_rule_and_defaults(world) -> None:
    client, admin = world.client, world.auth()
    body = {
        "metric": "self_agreement",
        "subject": "every_rater",
        "scope": "7d",
        "condition": "drop",
        "drop": 0.15,
        "lookback_seconds": 7 * 86400,
        "for_seconds": 3600,
        "repeat_interval_seconds": None,
        "channels": ["a-log"],
    }
    rule = client.post(f"{BASE}/alerts/rules", json=body, headers=admin).json()
    assert rule["condition"] == "drop" and rule["lookback_seconds"] == 604800
    assert rule["threshold"] is None and rule["repeat_interval_seconds"] is None
    assert rule["id"].startswith("alpha:self_agreement-") and rule["channels"] == ["a-log"]

    added = client.post(f"{BASE}/alerts/defaults", json={}, headers=admin).json()
    # kappa_S, rho, each rater's self-agreement drop and change detector, repeat coverage
    assert len(added["rules"]) == 5
    drop = next(r for r in added["rules"] if r["id"] == "alpha:default:self_agreement_drop")
    assert drop["z"] == 4.0
    assert next(r for r in added["rules"] if r["id"] == "alpha:default:kappa_s")["margin"] == 0.06
    assert client.post(f"{BASE}/alerts/defaults", json={}, headers=admin).json() == {"rules": []}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"channels": ["nowhere"]}, "channels"),  # no such channel: the service says so
        ({"channels": ["b-log"]}, "channels"),  # beta's channel is not alpha's
        ({"condition": "drop"}, "drop"),  # a drop without drop/lookback: the schema
        ({"threshold": "0.5"}, "threshold"),  # a string is not a number
        ({"scope": "week"}, "scope"),
        ({"subject": "rater:"}, "subject"),
    ],
)
def test_a_bad_rule_is_422_naming_the_field(world, change: dict, field: str) -> None:
    response = world.client.post(
        f"{BASE}/alerts/rules", json={**RULE, **change}, headers=world.auth()
    )
    error = _error(response, 422)
    assert field in _fields(error), error


def test_roles(world) -> None:
    client = world.client
    read, ingest = world.auth("alpha", "read"), world.auth("alpha", "ingest")
    error = _error(client.post(f"{BASE}/alerts/rules", json=RULE, headers=read), 403)
    assert error["code"] == "forbidden"
    log = {"name": "x-log", "kind": "log"}
    _error(client.post(f"{BASE}/alerts/channels", json=log, headers=read), 403)
    silence = {"ends_at": "2099-01-01T00:00:00Z", "subject": "project"}
    _error(client.post(f"{BASE}/alerts/silences", json=silence, headers=read), 403)
    _error(client.delete(f"{BASE}/alerts/rules/a-rule", headers=read), 403)
    _error(client.patch(f"{BASE}/settings", json={"interval_level": 0.9}, headers=read), 403)
    for path in ("rules", "channels", "states", "silences", "history/evaluations"):
        assert client.get(f"{BASE}/alerts/{path}", headers=read).status_code == 200
        _error(client.get(f"{BASE}/alerts/{path}", headers=ingest), 403)
    assert client.get(f"{BASE}/alerts/rules/a-rule", headers=read).status_code == 200


def test_webhook_secret_is_shown_once(world) -> None:
    client, admin = world.client, world.auth()
    body = {"name": "hook", "kind": "webhook", "url": PUBLIC_URL}
    created = client.post(f"{BASE}/alerts/channels", json=body, headers=admin)
    assert created.status_code == 201, created.text
    secret = created.json()["secret"]
    assert isinstance(secret, str) and len(secret) >= 32
    engine = make_engine(world.engine_url)
    try:
        with engine.connect() as connection:
            config = connection.execute(
                text("SELECT config FROM alert_channels WHERE name = 'hook'")
            ).scalar()
        stored = (json.loads(config) if isinstance(config, str) else config)["secret"]
    finally:
        engine.dispose()
    assert stored == secret  # the secret that signs is the one shown
    listed = client.get(f"{BASE}/alerts/channels", headers=admin)
    assert secret not in listed.text and "secret" not in listed.text
    assert {c["name"] for c in listed.json()["channels"]} == {"a-log", "hook"}
    log = client.post(f"{BASE}/alerts/channels", json={"name": "l2", "kind": "log"}, headers=admin)
    assert log.json()["secret"] is None
    again = client.post(f"{BASE}/alerts/channels", json=body, headers=admin)
    assert _error(again, 409)["message"] == "project 'alpha' already has a channel 'hook'"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.1/hook",
        "http://2130706433/",  # 127.0.0.1 as one number
        "http://no-such-host.invalid/",  # does not resolve
        "ftp://8.8.8.8/",
    ],
)
def test_ssrf_targets_are_refused_naming_the_url(world, url: str) -> None:
    client, admin = world.client, world.auth()
    body = {"name": "evil", "kind": "webhook", "url": url}
    error = _error(client.post(f"{BASE}/alerts/channels", json=body, headers=admin), 422)
    assert _fields(error) == ["url"], error
    channels = client.get(f"{BASE}/alerts/channels", headers=admin).json()["channels"]
    assert "evil" not in {c["name"] for c in channels}  # nothing half written


def test_delete_of_a_channel_is_guarded(world) -> None:
    client, admin = world.client, world.auth()
    body = {"name": "spare", "kind": "log"}
    assert client.post(f"{BASE}/alerts/channels", json=body, headers=admin).status_code == 201
    assert client.delete(f"{BASE}/alerts/channels/spare", headers=admin).status_code == 204
    # a-log is used by a-rule: 409 naming the rule, and the channel stays.
    error = _error(client.delete(f"{BASE}/alerts/channels/a-log", headers=admin), 409)
    assert "alpha:a-rule" in error["message"]
    _error(client.delete(f"{BASE}/alerts/channels/b-log", headers=admin), 404)


def test_another_projects_rule_and_silence_are_404(world) -> None:
    client, admin = world.client, world.auth()
    _error(client.get(f"{BASE}/alerts/rules/beta:b-rule", headers=admin), 404)
    _error(client.post(f"{BASE}/alerts/rules/beta:b-rule/disable", headers=admin), 404)
    _error(client.delete(f"{BASE}/alerts/rules/beta:b-rule", headers=admin), 404)
    history = client.get(
        f"{BASE}/alerts/history/evaluations", params={"rule": "beta:b-rule"}, headers=admin
    )
    _error(history, 404)
    silence = {"ends_at": "2099-01-01T00:00:00Z", "rule": "beta:b-rule"}
    _error(client.post(f"{BASE}/alerts/silences", json=silence, headers=admin), 404)
    for beta_silence in (
        world.opaque("silence", "beta", world.beta_silence_id),
        world.beta_silence_id,
    ):  # as beta's keys see it, and the global id
        _error(client.post(f"{BASE}/alerts/silences/{beta_silence}/end", headers=admin), 404)
    engine = make_engine(world.engine_url)
    try:
        beta = list_silences(UnitOfWork(engine, read_only=True), "beta")
    finally:
        engine.dispose()
    assert [s.id for s in beta] == [world.beta_silence_id]  # still active


def test_silences(world) -> None:
    client, admin = world.client, world.auth()
    listed = client.get(f"{BASE}/alerts/silences", headers=admin).json()["silences"]
    assert [s["id"] for s in listed] == [world.opaque("silence", "alpha", world.alpha_silence_id)]

    ends = (datetime.now(UTC) + timedelta(hours=2)).replace(tzinfo=None).isoformat()
    body = {"ends_at": ends, "subject": "rater:a1", "rule": "a-rule", "reason": "retraining"}
    created = client.post(f"{BASE}/alerts/silences", json=body, headers=admin)
    assert created.status_code == 201, created.text
    silence = created.json()
    assert silence["rule_id"] == "alpha:a-rule" and silence["subject"] == "rater:a1"
    assert silence["created_by"].startswith("api key ")
    assert datetime.fromisoformat(silence["ends_at"]).utcoffset() == timedelta(0)  # no zone: UTC

    end = client.post(f"{BASE}/alerts/silences/{silence['id']}/end", headers=admin)
    assert end.status_code == 204
    active = client.get(f"{BASE}/alerts/silences", headers=admin).json()["silences"]
    assert silence["id"] not in {s["id"] for s in active}
    everything = client.get(f"{BASE}/alerts/silences?include_ended=true", headers=admin).json()
    assert silence["id"] in {s["id"] for s in everything["silences"]}  # kept as a record
    _error(client.post(f"{BASE}/alerts/silences/{silence['id']}/end", headers=admin), 404)

    whole = {"ends_at": "2099-01-01T00:00:00Z"}
    error = _error(client.post(f"{BASE}/alerts/silences", json=whole, headers=admin), 422)
    assert error["details"][0]["field"] == "reason"
    backwards = {"ends_at": "2020-01-01T00:00:00Z", "subject": "project"}
    error = _error(client.post(f"{BASE}/alerts/silences", json=backwards, headers=admin), 422)
    assert error["details"][0]["field"] == "ends_at"
    number = {"ends_at": 4102444800, "subject": "project"}  # ISO 8601 only
    _error(client.post(f"{BASE}/alerts/silences", json=number, headers=admin), 422)


def test_states_and_history_after_a_recompute(world) -> None:
    client, admin = world.client, world.auth()
    # kappa_S is always below 2: the rule fires at the first evaluation (for = 0).
    body = {"metric": "kappa_s", "condition": "below", "threshold": 2.0, "name": "always"}
    rule = {**body, "min_n": 1, "channels": ["a-log"]}
    assert client.post(f"{BASE}/alerts/rules", json=rule, headers=admin).status_code == 201
    engine = make_engine(world.engine_url)
    try:
        row = {"item": "late", "rater": "a1", "label": "normal", "labeled_at": "2024-05-03T09:00Z"}
        ingest_labels(UnitOfWork(engine), "alpha", [row])
        project_id = find_project_id(UnitOfWork(engine), "alpha")
        recompute_project(UnitOfWork(engine), project_id, now=T0 + timedelta(days=3))
    finally:
        engine.dispose()

    states = client.get(f"{BASE}/alerts/states", headers=world.auth("alpha", "read")).json()
    mine = [s for s in states["states"] if s["rule_id"] == "alpha:always"]
    assert len(mine) == 1 and mine[0]["status"] == "firing" and mine[0]["subject"] == "project"
    assert mine[0]["value"] is not None and mine[0]["value"] < 2.0

    log = client.get(f"{BASE}/alerts/history/evaluations?rule=always", headers=admin).json()
    assert len(log["evaluations"]) >= 1
    entry = log["evaluations"][0]
    assert entry["verdict"] == "breach" and entry["to_status"] == "firing"
    assert entry["snapshot_id"] == mine[0]["snapshot_id"] and len(entry["event_ids"]) == 1

    notices = client.get(
        f"{BASE}/alerts/history/notifications?status=pending", headers=admin
    ).json()["notifications"]
    fired = [n for n in notices if n["rule_id"] == "alpha:always"]
    assert [(n["kind"], n["channel"], n["attempts"]) for n in fired] == [("firing", "a-log", 0)]
    assert fired[0]["event_id"] == entry["event_ids"][0]
    sent = client.get(f"{BASE}/alerts/history/notifications?status=sent", headers=admin).json()
    assert sent["notifications"] == []
    bad = client.get(f"{BASE}/alerts/history/notifications?status=lost", headers=admin)
    assert _error(bad, 422)["details"][0]["location"] == ["query", "status"]


def test_settings_update(world) -> None:
    client, admin = world.client, world.auth()
    before = client.get(f"{BASE}/settings", headers=admin).json()
    assert before["rater_model"] == "moments"
    assert (before["scale"], before["weights"]) == ("nominal", "quadratic")
    patch = {
        "interval_level": 0.9,
        "windows_days": [30, 7],
        "collapse": "latest",
        "rater_model": "max_entropy",
        "scale": "ordinal",
        "weights": "linear",
    }
    changed = client.patch(f"{BASE}/settings", json=patch, headers=admin)
    assert changed.status_code == 200, changed.text
    after = changed.json()
    assert after == {
        **before,
        "interval_level": 0.9,
        "windows_days": [7, 30],
        "collapse": "latest",
        "rater_model": "max_entropy",
        "scale": "ordinal",
        "weights": "linear",
    }
    assert client.get(f"{BASE}/settings", headers=admin).json() == after
    assert client.patch(f"{BASE}/settings", json={}, headers=admin).json() == after
    # beta is untouched
    assert client.get("/api/v1/projects/beta/settings", headers=world.auth("beta")).json() == before

    for bad, field in (
        ({"bootstrap_resamples": 5}, "bootstrap_resamples"),
        ({"interval_level": 1.0}, "interval_level"),
        ({"collapse": "random"}, "collapse"),
        ({"rater_model": "guess"}, "rater_model"),
        ({"scale": "interval"}, "scale"),
        ({"weights": "cubic"}, "weights"),
        ({"windows_days": [0]}, "windows_days"),
        ({"windows_days": [30, 7, 30]}, "windows_days"),  # a repeat is refused (issue 26)
        ({"windows_days": []}, "windows_days"),  # so is no window
        ({"colour": "red"}, "colour"),
    ):
        error = _error(client.patch(f"{BASE}/settings", json=bad, headers=admin), 422)
        assert field in error["details"][0]["location"], error
    assert client.get(f"{BASE}/settings", headers=admin).json() == after  # nothing written


def test_settings_service_names_the_field(world) -> None:
    from auditor.errors import NotFound
    from auditor.services.projects.settings import InvalidSetting, update_project_settings

    engine = make_engine(world.engine_url)
    try:
        for fields, field in (
            ({"interval_level": 1.5}, "interval_level"),
            ({"bootstrap_resamples": 3}, "bootstrap_resamples"),
            ({"rho_mode": "guess"}, "rho_mode"),
            ({"rater_model": "guess"}, "rater_model"),
            ({"scale": "ratio"}, "scale"),
            ({"weights": "cubic"}, "weights"),
            ({"windows_days": [7, -1]}, "windows_days"),
            ({"windows_days": [7, 7]}, "windows_days"),
            ({"windows_days": []}, "windows_days"),
            ({"recompute_interval_seconds": True}, "recompute_interval_seconds"),
            ({"nope": 1}, "nope"),
        ):
            with pytest.raises(InvalidSetting) as raised:
                update_project_settings(UnitOfWork(engine), "alpha", **fields)
            assert raised.value.field == field
        with pytest.raises(NotFound):
            update_project_settings(UnitOfWork(engine), "missing", interval_level=0.9)
        settings = update_project_settings(UnitOfWork(engine), "alpha", rho_mode="exact")
        assert settings.rho_mode.value == "exact" and settings.interval_level == 0.95
    finally:
        engine.dispose()


def test_rule_on_a_metric_where_higher_is_worse(world) -> None:
    client, admin = world.client, world.auth()
    for condition in ("above", "confidently_above"):
        body = {
            "metric": "random_choice",
            "subject": "every_rater",
            "condition": condition,
            "threshold": 0.3,
            "name": f"rc-{condition}",
        }
        created = client.post(f"{BASE}/alerts/rules", json=body, headers=admin)
        assert created.status_code == 201, created.text
        assert created.json()["condition"] == condition
        assert client.get(f"{BASE}/alerts/rules/rc-{condition}", headers=admin).json() == (
            created.json()
        )
