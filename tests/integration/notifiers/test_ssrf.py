"""Server-side request forgery: refused at save time and at send time, before any connection,
for both channel kinds that open connections (webhook URLs and SMTP hosts).

No test here may open a connection anywhere but the loopback receivers the tests start:
the ``connections`` spy records every socket connect of the process and must stay empty
for every refused target. Private networks are allowed only by the operator's list
(``AUDITOR_ALLOW_PRIVATE_TARGETS``), never by the channel.
"""

from __future__ import annotations

import ipaddress

import pytest

from auditor.notifiers import EmailChannel, Outcome, TargetRefused, WebhookChannel, address_problem
from auditor.notifiers.targets import check_host, validate_target
from tests.integration.notifiers.conftest import make_notification

SECRET = "s3cret-for-tests-only-0123456789"
PUBLIC = ipaddress.ip_address("93.184.216.34")
LOOPBACK = ipaddress.ip_address("127.0.0.1")
LOOPBACK_NET = (ipaddress.ip_network("127.0.0.0/8"),)

# (host as written in a URL, port, why). The SMTP case uses the same host without brackets.
REFUSED = [
    ("127.0.0.1", 6379, "loopback"),  # Redis
    ("169.254.169.254", 80, "link-local"),  # cloud metadata
    ("[::ffff:127.0.0.1]", 8080, "loopback"),  # IPv4-mapped loopback
    ("10.0.0.1", 80, "private"),
    ("localhost", None, "loopback"),  # a name resolving to loopback (port: the receiver's)
    ("2130706433", 80, "loopback"),  # 127.0.0.1 as one decimal number
    ("127.1", 80, "loopback"),
    ("[::1]", 80, "loopback"),
    ("0.0.0.0", 6379, "unspecified"),
    ("[::127.0.0.1]", 80, "loopback"),  # IPv4-compatible
    ("[2002:7f00:1::]", 80, "loopback"),  # 6to4 around 127.0.0.1
    ("[64:ff9b::a9fe:a9fe]", 80, "link-local"),  # NAT64 around 169.254.169.254
    ("[fe80::1]", 80, "link-local"),
    ("192.168.1.10", 80, "private"),
    ("100.64.0.1", 80, "non-public"),  # carrier-grade NAT
    ("224.0.0.1", 80, "multicast"),
    ("[::ffff:8.8.8.8]", 80, "IPv4-mapped"),
]
IDS = [host for host, _, _ in REFUSED]


@pytest.mark.parametrize(("host", "port", "why"), REFUSED, ids=IDS)
def test_webhook_refused_at_save_and_at_send_before_any_connection(
    host, port, why, receiver, connections
):
    url = f"http://{host}:{port or receiver.port}/hook"
    with pytest.raises(TargetRefused, match=why):
        validate_target(url)
    result = WebhookChannel(name="hook", url=url, secret=SECRET).send(make_notification())
    assert result.outcome is Outcome.PERMANENT
    assert "refused" in result.reason and why in result.reason
    assert connections == []
    assert receiver.received == []


@pytest.mark.parametrize(("host", "port", "why"), REFUSED, ids=IDS)
def test_smtp_host_refused_at_save_and_at_connect_before_any_connection(
    host, port, why, smtp_listener, connections
):
    bare = host.strip("[]")
    port = port or smtp_listener.port
    with pytest.raises(TargetRefused, match=why):
        check_host(bare, port)
    channel = EmailChannel("mail", bare, port, "a@example.org", ("ops@example.org",), timeout=2)
    result = channel.send(make_notification())
    assert result.outcome is Outcome.PERMANENT
    assert "refused" in result.reason and why in result.reason
    assert connections == []
    assert smtp_listener.accepted == 0


def test_dns_rebinding_between_save_and_send_is_caught(connections):
    answers = iter([[PUBLIC], [LOOPBACK]])

    def rebinding(host, port):
        return next(answers)

    url = "http://hooks.example.com/hook"
    validate_target(url, resolver=rebinding)  # public when saved
    channel = WebhookChannel(name="hook", url=url, secret=SECRET, resolver=rebinding)
    result = channel.send(make_notification())  # loopback when sent
    assert result.outcome is Outcome.PERMANENT and "loopback" in result.reason
    assert connections == []


def test_smtp_dns_rebinding_between_save_and_connect_is_caught(connections):
    answers = iter([[PUBLIC], [LOOPBACK]])

    def rebinding(host, port):
        return next(answers)

    check_host("mail.example.com", 25, resolver=rebinding)  # public when saved
    channel = EmailChannel(
        "mail", "mail.example.com", 25, "a@example.org", ("b@example.org",), resolver=rebinding
    )
    result = channel.send(make_notification())  # loopback when sent
    assert result.outcome is Outcome.PERMANENT and "loopback" in result.reason
    assert connections == []


def test_smtp_connects_to_the_checked_address_not_a_second_lookup(smtp_listener, connections):
    # The name resolves (by the injected resolver) to loopback once; the operator allows it.
    # The client must connect to that address, never ask DNS for "mail.example.com" again.
    lookups: list[str] = []

    def once(host, port):
        lookups.append(host)
        return [LOOPBACK]

    channel = EmailChannel(
        "mail", "mail.example.com", smtp_listener.port, "a@example.org", ("b@example.org",),
        timeout=2, allowed=LOOPBACK_NET, resolver=once,
    )  # fmt: skip
    channel.send(make_notification())
    assert lookups == ["mail.example.com"]
    assert connections == [("127.0.0.1", smtp_listener.port)]
    assert smtp_listener.accepted == 1


def test_a_name_with_any_bad_address_is_refused(connections):
    def mixed(host, port):
        return [PUBLIC, ipaddress.ip_address("10.1.2.3")]

    with pytest.raises(TargetRefused, match="private"):
        validate_target("https://hooks.example.com/", resolver=mixed)
    with pytest.raises(TargetRefused, match="private"):
        check_host("mail.example.com", 25, resolver=mixed)
    assert connections == []


def test_redirect_to_loopback_is_not_followed(receiver, connections):
    # The first hop must reach the loopback receiver, so loopback is allowed (the operator's
    # list) and a public-looking name resolves (by the injected resolver) to loopback.
    receiver.script = [(302, {"Location": "http://127.0.0.1:6379/"})]
    url = f"http://hooks.example.com:{receiver.port}/hook"
    channel = WebhookChannel(
        name="hook", url=url, secret=SECRET, allowed=LOOPBACK_NET, resolver=lambda h, p: [LOOPBACK]
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
        validate_target(url, resolver=lambda h, p: [PUBLIC])


@pytest.mark.parametrize("host", ["exa mple.com", "a/b", "[::zz]", "", "host\x00name"])
def test_malformed_smtp_hosts_are_refused(host):
    with pytest.raises(TargetRefused):
        check_host(host, 25, resolver=lambda h, p: [PUBLIC])


def test_public_addresses_pass_and_only_the_operators_networks_allow_private_ones():
    for text in ("93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2002:5db8:d822::1"):
        assert address_problem(ipaddress.ip_address(text)) is None, text
    validate_target("https://hooks.example.com/x", resolver=lambda h, p: [PUBLIC])
    allowed = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1/128"))
    validate_target("http://10.0.0.1:9000/x", allowed)
    validate_target("http://[::1]:9000/x", allowed)
    check_host("10.2.3.4", 25, allowed)
    with pytest.raises(TargetRefused, match="private"):  # outside the allowed networks
        validate_target("http://192.168.0.1:9000/x", allowed)
    with pytest.raises(TargetRefused, match="unspecified"):  # never, whatever is allowed
        validate_target("http://0.0.0.0:9000/x", (ipaddress.ip_network("0.0.0.0/0"),))
