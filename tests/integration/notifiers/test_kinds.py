"""Channel kinds as plugins: each validates its settings into a typed config, naming the
setting at fault; configs survive the JSON column; secrets are never shown."""

from __future__ import annotations

import ipaddress

import pytest

from auditor.errors import Invalid
from auditor.notifiers.kinds import (
    KINDS,
    dump_config,
    kind_named,
    load_config,
    public_config,
)
from auditor.notifiers.kinds.email import EmailConfig
from auditor.notifiers.kinds.webhook import WebhookConfig

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)
SECRET = "s" * 32


def test_every_kind_is_registered_under_its_own_name() -> None:
    assert set(KINDS) == {"webhook", "email", "log"}
    assert all(kind.name == name for name, kind in KINDS.items())


def test_an_unknown_kind_names_the_kind_field() -> None:
    with pytest.raises(Invalid, match="channel kind must be one of") as caught:
        kind_named("pager")
    assert caught.value.field == "kind"


def test_webhook_config_round_trips_and_hides_its_secret() -> None:
    config = KINDS["webhook"].validate("hook", {"url": "http://127.0.0.1:9/"}, LOOPBACK)
    assert isinstance(config, WebhookConfig) and len(config.secret) >= 32  # generated
    stored = dump_config(config)
    assert load_config("webhook", stored) == config
    assert public_config(config) == {"url": "http://127.0.0.1:9/"}


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({}, "url"),
        ({"url": "http://127.0.0.1:9/"}, "url"),  # private, and the operator allows nothing
        ({"url": "http://127.0.0.1:9/", "secret": "short"}, "secret"),
        ({"url": "http://127.0.0.1:9/", "email_host": "h"}, "email_host"),  # not a webhook's
    ],
)
def test_webhook_refusals_name_the_setting(raw: dict, field: str) -> None:
    allowed = () if len(raw) == 1 else LOOPBACK
    with pytest.raises(Invalid) as caught:
        KINDS["webhook"].validate("hook", raw, allowed)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"email_to": []}, "email_to"),
        ({"email_port": 70000}, "email_port"),
        ({"username": "u"}, "password"),
        ({"username": "u", "password": "p"}, "starttls"),
        ({"email_from": None}, "email_from"),
        ({"email_host": "10.0.0.1"}, "email_host"),  # private, not allowed
        ({"url": "http://x/"}, "url"),
    ],
)
def test_email_refusals_name_the_setting(change: dict, field: str) -> None:
    raw = {"email_host": "127.0.0.1", "email_from": "a@example.org", "email_to": ["b@x.org"]}
    with pytest.raises(Invalid) as caught:
        KINDS["email"].validate("mail", {**raw, **change}, LOOPBACK)
    assert caught.value.field == field


def test_email_config_defaults_the_port_and_hides_the_password() -> None:
    raw = {
        "email_host": "127.0.0.1",
        "email_from": "a@example.org",
        "email_to": ["b@x.org"],
        "starttls": True,
        "username": "u",
        "password": "p",
    }
    config = KINDS["email"].validate("mail", raw, LOOPBACK)
    assert config == EmailConfig("127.0.0.1", 25, "a@example.org", ("b@x.org",), True, "u", "p")
    assert load_config("email", dump_config(config)) == config
    assert "password" not in public_config(config)
