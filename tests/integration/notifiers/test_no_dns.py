"""Checking a channel's host resolves through an injectable resolver (issue 26 item 8): these
tests install one that knows only this machine's names (conftest ``_no_dns``), so saving a
channel with any other name sends no DNS query. Before, the check always asked the system's
resolver, and a test depended on what DNS answered."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from auditor.errors import Invalid
from auditor.notifiers.kinds import kind_named

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = socket.getaddrinfo

    def spy(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(str(host))
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", spy)
    return asked


@pytest.mark.parametrize(
    ("kind", "settings", "field"),
    [
        ("webhook", {"url": "https://hooks.example.com/x"}, "url"),
        ("slack", {"url": "https://hooks.slack.example/services/x"}, "url"),
        (
            "email",
            {
                "email_host": "mail.example.org",
                "email_from": "a@example.org",
                "email_to": ["b@example.org"],
            },
            "email_host",
        ),
    ],
)
def test_saving_a_channel_sends_no_dns_query(lookups, kind: str, settings, field: str) -> None:
    with pytest.raises(Invalid) as refused:
        kind_named(kind).validate("c", settings, LOOPBACK)
    assert refused.value.field == field and "cannot resolve" in str(refused.value)
    assert lookups == []


def test_local_names_still_resolve(lookups) -> None:
    config = kind_named("webhook").validate("c", {"url": "http://localhost:9/x"}, LOOPBACK)
    assert config.url == "http://localhost:9/x"
    assert lookups == []
