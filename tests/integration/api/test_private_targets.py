"""Private targets are the operator's decision: no project key can make the service connect
to loopback or the private network, through a webhook or an SMTP host.

A real TCP listener on loopback counts the connections it accepts; every refusal here must
leave it at zero. Only ``AUDITOR_ALLOW_PRIVATE_TARGETS`` (the app's settings) opens a range.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from auditor.api import create_app
from tests.integration.api.conftest import make_settings, seed
from tests.listener import Listener, listening

BASE = "/api/v1/projects/alpha/alerts/channels"


@pytest.fixture
def listener() -> Iterator[Listener]:
    with listening() as state:
        yield state


def _webhook(port: int, **extra: object) -> dict:
    return {"name": "inside", "kind": "webhook", "url": f"http://127.0.0.1:{port}/", **extra}


def _email(host: str, port: int) -> dict:
    return {
        "name": "mail", "kind": "email", "email_host": host, "email_port": port,
        "email_from": "auditor@example.org", "email_to": ["ops@example.org"],
    }  # fmt: skip


def test_internal_true_from_an_admin_key_is_an_unknown_field_and_connects_nowhere(
    world, listener: Listener
) -> None:
    admin = world.auth()
    answer = world.client.post(BASE, json=_webhook(listener.port, internal=True), headers=admin)
    assert answer.status_code == 422, answer.text
    locations = [d["location"] for d in answer.json()["error"]["details"]]
    assert ["body", "internal"] in locations, locations
    # Nor through the kind's own settings: the webhook plugin takes no such setting.
    inside = {**_webhook(listener.port), "config": {"internal": True}}
    answer = world.client.post(BASE, json=inside, headers=admin)
    assert answer.status_code == 422, answer.text
    assert "internal" in answer.json()["error"]["message"], answer.text
    listed = world.client.get(BASE, headers=admin).json()["channels"]
    assert "inside" not in {c["name"] for c in listed}
    assert all("internal" not in c for c in listed)  # the field is gone from the output too
    assert listener.accepted == 0


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "2130706433", "10.0.0.1"])
def test_private_targets_of_both_kinds_are_refused_naming_the_field(
    world, listener: Listener, host: str
) -> None:
    admin = world.auth()
    shown = f"[{host}]" if ":" in host else host
    webhook = {**_webhook(listener.port), "url": f"http://{shown}:{listener.port}/"}
    for body, field in ((webhook, "url"), (_email(host, listener.port), "email_host")):
        answer = world.client.post(BASE, json=body, headers=admin)
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert [d.get("field") for d in error["details"]] == [field], error
        assert "AUDITOR_ALLOW_PRIVATE_TARGETS" in error["message"]
    assert listener.accepted == 0


def test_the_operators_list_allows_a_private_range_for_both_kinds(
    database_url: str, listener: Listener
) -> None:
    keys, _ = seed(database_url)
    settings = make_settings(database_url, allow_private_targets="127.0.0.0/8")
    admin = {"Authorization": f"Bearer {keys[('alpha', 'admin')]}"}
    with TestClient(create_app(settings)) as client:
        assert client.post(BASE, json=_webhook(listener.port), headers=admin).status_code == 201
        email = _email("127.0.0.1", listener.port)
        assert client.post(BASE, json=email, headers=admin).status_code == 201
        outside = {**_webhook(listener.port), "name": "out", "url": "http://10.0.0.1/"}
        assert client.post(BASE, json=outside, headers=admin).status_code == 422
    assert listener.accepted == 0  # saving checks addresses; it does not connect
