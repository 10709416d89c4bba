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
    assert set(KINDS) == {"webhook", "email", "log", "slack"}
    assert all(kind.name == name for name, kind in KINDS.items())


def test_an_unknown_kind_names_the_kind_field() -> None:
    with pytest.raises(Invalid, match="channel kind must be one of") as caught:
        kind_named("pager")
    assert caught.value.field == "kind"


def test_an_unknown_setting_is_named_with_the_kind_and_its_article() -> None:
    with pytest.raises(Invalid, match=r"^an email channel does not take 'url'") as caught:
        KINDS["email"].validate("mail", {"url": "http://127.0.0.1:9/"}, LOOPBACK)
    assert caught.value.field == "url"
    with pytest.raises(Invalid, match=r"^a webhook channel does not take 'to'"):
        KINDS["webhook"].validate("hook", {"url": "http://127.0.0.1:9/", "to": ["a@b.c"]}, LOOPBACK)


def test_webhook_config_round_trips_and_hides_its_secret() -> None:
    config = KINDS["webhook"].validate("hook", {"url": "http://127.0.0.1:9/"}, LOOPBACK)
    assert isinstance(config, WebhookConfig) and len(config.secret) >= 32  # generated
    stored = dump_config(config)
    assert load_config("webhook", stored) == config
    assert public_config("webhook", config) == {"url": "http://127.0.0.1:9/"}


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
    assert "password" not in public_config("email", config)


EMAIL = {"email_host": "127.0.0.1", "email_from": "a@example.org", "email_to": ["b@x.org"]}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"email_to": "b@x.org"}, "email_to"),  # a string is not a list (was: its characters)
        ({"email_to": ["b@x.org", 5]}, "email_to"),
        ({"email_to": [""]}, "email_to"),
        ({"starttls": "false"}, "starttls"),  # was: True
        ({"starttls": 1}, "starttls"),
        ({"email_port": "abc"}, "email_port"),  # was: a bare ValueError
        ({"email_port": "587"}, "email_port"),  # text is the CLI's to convert, not the API's
        ({"email_port": 0}, "email_port"),  # was: 25
        ({"email_port": True}, "email_port"),
        ({"email_port": 25.5}, "email_port"),
        ({"email_host": 5}, "email_host"),
        ({"email_host": ""}, "email_host"),
        ({"email_from": ["a@example.org"]}, "email_from"),
        ({"username": 7, "password": "p", "starttls": True}, "username"),
        ({"username": "u", "password": 7, "starttls": True}, "password"),
        ({"password": "p"}, "username"),
    ],
)
def test_email_checks_each_type_and_names_the_setting(change: dict, field: str) -> None:
    with pytest.raises(Invalid) as caught:
        KINDS["email"].validate("mail", {**EMAIL, **change}, LOOPBACK)
    assert caught.value.field == field
    assert field in str(caught.value)  # the setting, not a CLI option
    assert "--" not in str(caught.value)


def test_email_takes_a_whole_float_port_as_json_does() -> None:
    config = KINDS["email"].validate("mail", {**EMAIL, "email_port": 587.0}, LOOPBACK)
    assert config.email_port == 587 and isinstance(config.email_port, int)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"url": 5}, "url"),
        ({"url": ""}, "url"),
        ({"url": ["http://127.0.0.1:9/"]}, "url"),
        ({"url": "http://127.0.0.1:9/", "secret": 12345}, "secret"),
        ({"url": "http://127.0.0.1:9/", "secret": ""}, "secret"),
    ],
)
def test_webhook_checks_each_type_and_names_the_setting(raw: dict, field: str) -> None:
    with pytest.raises(Invalid) as caught:
        KINDS["webhook"].validate("hook", raw, LOOPBACK)
    assert caught.value.field == field
    assert "--" not in str(caught.value)


def test_webhook_needs_url_names_the_setting_not_an_option() -> None:
    with pytest.raises(Invalid, match="needs url") as caught:
        KINDS["webhook"].validate("hook", {}, LOOPBACK)
    assert "--url" not in str(caught.value)


@pytest.mark.parametrize("raw", [{"url": "http://x/"}, {"email_host": "h"}, {"anything": 1}])
def test_log_takes_no_setting_and_names_the_one_given(raw: dict) -> None:
    with pytest.raises(Invalid, match="does not take") as caught:
        KINDS["log"].validate("log", raw, LOOPBACK)
    assert caught.value.field == next(iter(raw))


def test_describe_shows_every_setting_but_secrets() -> None:
    raw = {**EMAIL, "starttls": True, "username": "u", "password": "p"}
    email = KINDS["email"].validate("mail", raw, LOOPBACK)
    assert KINDS["email"].describe(email) == {
        "email_host": "127.0.0.1",
        "email_port": 25,
        "email_from": "a@example.org",
        "email_to": ["b@x.org"],
        "starttls": True,
        "username": "u",
    }
    assert KINDS["log"].describe(KINDS["log"].validate("log", {}, ())) == {}


@pytest.mark.parametrize(
    ("kind", "key", "text", "value"),
    [
        ("email", "email_port", "587", 587),
        ("email", "starttls", "true", True),
        ("email", "starttls", "False", False),
        ("email", "email_to", "a@x.org, b@x.org", ["a@x.org", "b@x.org"]),
        ("email", "email_host", "smtp.example.org", "smtp.example.org"),
        ("webhook", "url", "https://x/", "https://x/"),
    ],
)
def test_text_settings_read_as_the_settings_type(kind: str, key: str, text: str, value) -> None:
    assert KINDS[kind].from_text(key, text) == value


@pytest.mark.parametrize(("key", "text"), [("email_port", "abc"), ("starttls", "yes")])
def test_text_that_is_not_the_settings_type_is_refused(key: str, text: str) -> None:
    with pytest.raises(Invalid) as caught:
        KINDS["email"].from_text(key, text)
    assert caught.value.field == key
