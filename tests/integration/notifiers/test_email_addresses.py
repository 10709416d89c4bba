"""Issue 26 item 7: e-mail addresses are checked when a channel is saved: no CR/LF (a header
injection that the SMTP server then refuses, so the channel dead-lettered silently), one
address per entry. Before, both were saved."""

from __future__ import annotations

import ipaddress

import pytest

from auditor.errors import Invalid
from auditor.notifiers.kinds import kind_named

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def _settings(**changes: object) -> dict[str, object]:
    return {"email_host": "127.0.0.1", "email_from": "a@example.org", "email_to": ["b@x.org"],
            **changes}  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "field", "said"),
    [
        ({"email_to": ["ops@x.org\r\nBcc: evil@y.org"]}, "email_to", "control character"),
        ({"email_from": "a@example.org\nX-Hdr: 1"}, "email_from", "control character"),
        ({"email_to": ["a@x.org, b@x.org"]}, "email_to", "more than one address"),
        ({"email_to": ["a@x.org;b@x.org"]}, "email_to", "more than one address"),
        ({"email_to": ["ok@x.org", "Ops <ops@x.org>"]}, "email_to", "plain address"),
        ({"email_to": ["nobody"]}, "email_to", "not an address"),
        ({"email_from": "a@localhost"}, "email_from", "invalid domain"),
        ({"email_to": ["a..b@x.org"]}, "email_to", "local part"),
    ],
)
def test_bad_addresses_are_refused_at_save(changes, field: str, said: str) -> None:
    with pytest.raises(Invalid) as refused:
        kind_named("email").validate("mail", _settings(**changes), LOOPBACK)
    assert refused.value.field == field
    assert said in str(refused.value)
    assert "\r" not in str(refused.value) and "\n" not in str(refused.value)


def test_good_addresses_are_kept() -> None:
    addresses = ["ops@x.org", "first.last+tag@sub.example.co.uk", "o'neil@münchen.de"]
    config = kind_named("email").validate("mail", _settings(email_to=addresses), LOOPBACK)
    assert list(config.email_to) == addresses
