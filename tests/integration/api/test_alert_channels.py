"""Channels through the API as plugins: a kind's settings in ``config`` (the legacy top-level
fields still work), responses carry the kind's settings without secrets, and PATCH changes
settings in place, keeping the secrets not given."""

from __future__ import annotations

import json

from sqlalchemy import text

from auditor.storage.db import make_engine
from tests.integration.api.test_alerts import BASE, PUBLIC_URL, _error, _fields

EMAIL = {
    "email_host": "8.8.4.4",
    "email_port": 587,
    "email_from": "a@example.org",
    "email_to": ["b@example.org"],
    "starttls": True,
    "username": "u",
    "password": "first-password",
}


def _stored(world, name: str) -> dict:
    engine = make_engine(world.engine_url)
    try:
        with engine.connect() as connection:
            config = connection.execute(
                text("SELECT config FROM alert_channels WHERE name = :n"), {"n": name}
            ).scalar()
    finally:
        engine.dispose()
    return json.loads(config) if isinstance(config, str) else config


def test_config_object_and_legacy_fields_make_the_same_channel(world) -> None:
    client, admin = world.client, world.auth()
    made = client.post(
        f"{BASE}/alerts/channels",
        json={"name": "mail", "kind": "email", "config": EMAIL},
        headers=admin,
    )
    assert made.status_code == 201, made.text
    out = made.json()
    public = {k: v for k, v in EMAIL.items() if k != "password"}
    assert out["config"] == public and out["email_host"] == "8.8.4.4"
    assert "first-password" not in made.text and out["secret"] is None
    legacy = client.post(
        f"{BASE}/alerts/channels", json={"name": "mail2", "kind": "email", **EMAIL}, headers=admin
    )
    assert legacy.status_code == 201, legacy.text
    assert legacy.json()["config"] == public
    assert _stored(world, "mail2") == _stored(world, "mail")

    clash = {"name": "m3", "kind": "webhook", "url": PUBLIC_URL, "config": {"url": "https://x/"}}
    assert _fields(
        _error(client.post(f"{BASE}/alerts/channels", json=clash, headers=admin), 422)
    ) == ["url"]


def test_the_plugin_checks_config_types_naming_the_setting(world) -> None:
    client, admin = world.client, world.auth()
    for change, field in (
        ({"email_to": "b@example.org"}, "email_to"),
        ({"starttls": "false"}, "starttls"),
        ({"email_port": "abc"}, "email_port"),
        ({"email_port": 0}, "email_port"),
        ({"pager": "x"}, "pager"),
    ):
        body = {"name": "bad", "kind": "email", "config": {**EMAIL, **change}}
        error = _error(client.post(f"{BASE}/alerts/channels", json=body, headers=admin), 422)
        assert _fields(error) == [field], error
    unknown = {"name": "bad", "kind": "pager", "config": {}}
    error = _error(client.post(f"{BASE}/alerts/channels", json=unknown, headers=admin), 422)
    assert _fields(error) == ["kind"]


def test_patch_rotates_a_secret_and_keeps_the_rest(world) -> None:
    client, admin = world.client, world.auth()
    body = {"name": "hook", "kind": "webhook", "config": {"url": PUBLIC_URL}}
    first = client.post(f"{BASE}/alerts/channels", json=body, headers=admin).json()["secret"]
    rule = {"metric": "rho", "condition": "below", "threshold": 0.5, "channels": ["hook"]}
    assert client.post(f"{BASE}/alerts/rules", json=rule, headers=admin).status_code == 201

    new_secret = "n" * 40
    patched = client.patch(
        f"{BASE}/alerts/channels/hook", json={"config": {"secret": new_secret}}, headers=admin
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["config"] == {"url": PUBLIC_URL} and new_secret not in patched.text
    assert _stored(world, "hook") == {"url": PUBLIC_URL, "secret": new_secret} != first

    moved = client.patch(
        f"{BASE}/alerts/channels/hook",
        json={"config": {"url": "https://8.8.8.8/other"}, "timeout_seconds": 3},
        headers=admin,
    )
    assert moved.json()["url"] == "https://8.8.8.8/other" and moved.json()["timeout_seconds"] == 3
    assert _stored(world, "hook")["secret"] == new_secret  # not given: kept

    refused = client.patch(
        f"{BASE}/alerts/channels/hook", json={"config": {"url": "http://10.0.0.1/"}}, headers=admin
    )
    assert _fields(_error(refused, 422)) == ["url"]
    assert _stored(world, "hook")["url"] == "https://8.8.8.8/other"  # nothing written
    short = client.patch(
        f"{BASE}/alerts/channels/hook", json={"config": {"secret": "short"}}, headers=admin
    )
    assert _fields(_error(short, 422)) == ["secret"]
    _error(client.patch(f"{BASE}/alerts/channels/nope", json={}, headers=admin), 404)
    read = world.auth("alpha", "read")
    _error(client.patch(f"{BASE}/alerts/channels/hook", json={}, headers=read), 403)


def test_patch_rotates_an_smtp_password(world) -> None:
    client, admin = world.client, world.auth()
    body = {"name": "mail", "kind": "email", "config": EMAIL}
    assert client.post(f"{BASE}/alerts/channels", json=body, headers=admin).status_code == 201
    patched = client.patch(
        f"{BASE}/alerts/channels/mail", json={"config": {"password": "second"}}, headers=admin
    )
    assert patched.status_code == 200, patched.text
    stored = _stored(world, "mail")
    assert stored["password"] == "second" and stored["username"] == "u"
    assert stored["email_to"] == ["b@example.org"]
