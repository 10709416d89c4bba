"""Server-side request forgery: refused at save time and at send time, before any connection.

No test here may open a connection anywhere but the loopback receivers the tests start:
the ``connections`` spy records every socket connect of the process and must stay empty
for every refused target.
"""

from __future__ import annotations

import ipaddress

import pytest

from auditor.notifiers import Outcome, TargetRefused, WebhookChannel, address_problem
from auditor.notifiers.targets import validate_target
from tests.integration.notifiers.conftest import make_notification

SECRET = "s3cret-for-tests-only-0123456789"
PUBLIC = ipaddress.ip_address("93.184.216.34")
LOOPBACK = ipaddress.ip_address("127.0.0.1")

REFUSED = [
    ("http://127.0.0.1:6379/", "loopback"),  # Redis
    ("http://169.254.169.254/latest/meta-data", "link-local"),  # cloud metadata
    ("http://[::ffff:127.0.0.1]:8080/", "loopback"),  # IPv4-mapped loopback
    ("http://10.0.0.1/", "private"),
    ("http://localhost:{port}/hook", "loopback"),  # a name resolving to loopback
    ("http://2130706433/", "loopback"),  # 127.0.0.1 as one decimal number
    ("http://127.1/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://0.0.0.0:6379/", "unspecified"),
    ("http://[::127.0.0.1]/", "loopback"),  # IPv4-compatible
    ("http://[2002:7f00:1::]/", "loopback"),  # 6to4 around 127.0.0.1
    ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),  # NAT64 around 169.254.169.254
    ("http://[fe80::1]/", "link-local"),
    ("http://192.168.1.10/", "private"),
    ("http://100.64.0.1/", "non-public"),  # carrier-grade NAT
    ("http://224.0.0.1/", "multicast"),
    ("http://[::ffff:8.8.8.8]/", "IPv4-mapped"),
]


@pytest.mark.parametrize(("template", "why"), REFUSED, ids=[u for u, _ in REFUSED])
def test_refused_at_save_and_at_send_before_any_connection(template, why, receiver, connections):
    url = template.format(port=receiver.port)
    with pytest.raises(TargetRefused, match=why):
        validate_target(url, internal=False)
    result = WebhookChannel(name="hook", url=url, secret=SECRET).send(make_notification())
    assert result.outcome is Outcome.PERMANENT
    assert "refused" in result.reason and why in result.reason
    assert connections == []
    assert receiver.received == []


def test_dns_rebinding_between_save_and_send_is_caught(connections):
    answers = iter([[PUBLIC], [LOOPBACK]])

    def rebinding(host, port):
        return next(answers)

    url = "http://hooks.example.com/hook"
    validate_target(url, internal=False, resolver=rebinding)  # public when saved
    channel = WebhookChannel(name="hook", url=url, secret=SECRET, resolver=rebinding)
    result = channel.send(make_notification())  # loopback when sent
    assert result.outcome is Outcome.PERMANENT and "loopback" in result.reason
    assert connections == []


def test_a_name_with_any_bad_address_is_refused(connections):
    def mixed(host, port):
        return [PUBLIC, ipaddress.ip_address("10.1.2.3")]

    with pytest.raises(TargetRefused, match="private"):
        validate_target("https://hooks.example.com/", internal=False, resolver=mixed)


def test_redirect_to_loopback_is_not_followed(receiver, connections):
    # The first hop must reach the loopback receiver, so it is an internal-marked channel
    # whose public-looking name resolves (by the injected resolver) to loopback.
    receiver.script = [(302, {"Location": "http://127.0.0.1:6379/"})]
    url = f"http://hooks.example.com:{receiver.port}/hook"
    channel = WebhookChannel(
        name="hook", url=url, secret=SECRET, internal=True, resolver=lambda h, p: [LOOPBACK]
    )
    result = channel.send(make_notification())
    assert result.outcome is Outcome.PERMANENT and result.status_code == 302
    assert "not followed" in result.reason
    assert connections == [("127.0.0.1", receiver.port)]  # nothing towards 6379
    assert len(receiver.received) == 1


@pytest.mark.parametrize(
    "url",
    ["ftp://hooks.example.com/", "http://user:pw@hooks.example.com/", "http:///nohost",
     "hooks.example.com/path", "http://exa mple.com/"],
)  # fmt: skip
def test_malformed_urls_are_refused(url):
    with pytest.raises(TargetRefused):
        validate_target(url, internal=False, resolver=lambda h, p: [PUBLIC])


def test_public_addresses_pass_and_internal_channels_allow_private_ones():
    for text in ("93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2002:5db8:d822::1"):
        assert address_problem(ipaddress.ip_address(text)) is None, text
    validate_target("https://hooks.example.com/x", internal=False, resolver=lambda h, p: [PUBLIC])
    validate_target("http://10.0.0.1:9000/x", internal=True)
    validate_target("http://[::1]:9000/x", internal=True)
    with pytest.raises(TargetRefused, match="unspecified"):
        validate_target("http://0.0.0.0:9000/x", internal=True)
