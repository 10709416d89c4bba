"""The webhook channel against a real HTTP receiver on loopback."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import random
import socket
import time
from datetime import UTC, datetime, timedelta

import pytest

from auditor.alerting import RetryPolicy, next_attempt_at
from auditor.notifiers import (
    HEADER_EVENT_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    Outcome,
    WebhookChannel,
    WebhookTimeouts,
    verify,
)
from tests.integration.notifiers.conftest import make_notification

SECRET = "s3cret-for-tests-only-0123456789"
LOOPBACK = ipaddress.ip_address("127.0.0.1")


def internal_channel(url: str, **kwargs) -> WebhookChannel:
    """A channel to a receiver on loopback, which the operator's list allows here."""
    allowed = (ipaddress.ip_network("127.0.0.0/8"),)
    return WebhookChannel(name="hook", url=url, secret=SECRET, allowed=allowed, **kwargs)


def test_signed_body_arrives_and_verifies(receiver, connections):
    notification = make_notification()
    result = internal_channel(receiver.url).send(notification)
    assert result.outcome is Outcome.OK and result.status_code == 200
    assert connections == [("127.0.0.1", receiver.port)]  # the spy sees real connections

    [got] = receiver.received
    headers = {k.lower(): v for k, v in got.headers.items()}
    assert got.body == notification.to_json_bytes()
    assert json.loads(got.body) == notification.to_dict()
    assert headers[HEADER_EVENT_ID.lower()] == notification.event_id
    timestamp = headers[HEADER_TIMESTAMP.lower()]
    signature = headers[HEADER_SIGNATURE.lower()]
    assert abs(int(timestamp) - time.time()) < 60
    assert verify(SECRET, notification.event_id, timestamp, got.body, signature, time.time())
    # The same check written out by hand, as a receiver in any language would do it.
    mac = hmac.new(SECRET.encode(), f"{notification.event_id}.{timestamp}.".encode() + got.body,
                   hashlib.sha256).hexdigest()  # fmt: skip
    assert signature == f"sha256={mac}"
    # Tampering with any signed part, the secret, or replaying late fails.
    now = time.time()
    assert not verify(SECRET, notification.event_id, timestamp, got.body + b" ", signature, now)
    assert not verify(SECRET, "f" * 32, timestamp, got.body, signature, now)
    assert not verify(SECRET, notification.event_id, str(int(timestamp) + 1), got.body,
                      signature, now)  # fmt: skip
    assert not verify("another-secret-0123456789", notification.event_id, timestamp, got.body,
                      signature, now)  # fmt: skip
    assert not verify(SECRET, notification.event_id, timestamp, got.body, signature, now + 3600)


def test_three_failures_then_success_carry_one_event_id(receiver):
    receiver.script = [500, 500, 500, 200]
    policy = RetryPolicy(
        base=timedelta(milliseconds=20), cap=timedelta(milliseconds=100), max_attempts=6
    )
    draws = random.Random(5)
    channel = internal_channel(receiver.url)
    notification = make_notification()
    outcomes, attempts = [], 0
    while True:
        result = channel.send(notification)
        attempts += 1
        outcomes.append(result.outcome)
        if result.ok:
            break
        assert result.outcome is Outcome.RETRYABLE and result.status_code == 500
        now = datetime.now(UTC)
        retry_at = next_attempt_at(attempts, policy, now, draws.random())
        assert retry_at is not None
        time.sleep((retry_at - now).total_seconds())
    assert outcomes == [Outcome.RETRYABLE] * 3 + [Outcome.OK]
    ids = {r.headers[HEADER_EVENT_ID] for r in receiver.received}
    assert len(receiver.received) == 4 and ids == {notification.event_id}
    assert {r.body for r in receiver.received} == {notification.to_json_bytes()}


def test_a_receiver_that_never_recovers_is_dead_lettered(receiver):
    receiver.script = [503]
    policy = RetryPolicy(base=timedelta(milliseconds=1), cap=timedelta(milliseconds=5),
                         max_attempts=3)  # fmt: skip
    channel, attempts = internal_channel(receiver.url), 0
    while True:
        assert not channel.send(make_notification()).ok
        attempts += 1
        if next_attempt_at(attempts, policy, datetime.now(UTC), 0.5) is None:
            break
    assert attempts == len(receiver.received) == 3


@pytest.mark.parametrize(
    ("script", "outcome", "code"),
    [([400], Outcome.PERMANENT, 400), ([404], Outcome.PERMANENT, 404),
     ([429], Outcome.RETRYABLE, 429), ([502], Outcome.RETRYABLE, 502),
     ([204], Outcome.OK, 204)],
)  # fmt: skip
def test_status_codes_are_classified(receiver, script, outcome, code):
    receiver.script = script
    result = internal_channel(receiver.url).send(make_notification())
    assert (result.outcome, result.status_code) == (outcome, code)


def test_slow_receiver_times_out_as_retryable(receiver):
    receiver.script = [("sleep", 2.0)]
    timeouts = WebhookTimeouts(connect=1.0, read=0.3, write=1.0, pool=1.0)
    started = time.monotonic()
    result = internal_channel(receiver.url, timeouts=timeouts).send(make_notification())
    assert result.outcome is Outcome.RETRYABLE and "timeout" in result.reason
    assert time.monotonic() - started < 1.5


def test_closed_port_and_dns_failure_are_retryable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = internal_channel(f"http://127.0.0.1:{port}/").send(make_notification())
    assert result.outcome is Outcome.RETRYABLE

    def no_dns(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    result = internal_channel("http://hooks.example.com/", resolver=no_dns).send(
        make_notification()
    )
    assert result.outcome is Outcome.RETRYABLE and "cannot resolve" in result.reason


def test_connects_to_the_address_it_checked_with_the_name_in_host(receiver, connections):
    calls = []

    def resolver(host, port):
        calls.append((host, port))
        return [LOOPBACK]

    url = f"http://hooks.example.com:{receiver.port}/hook"
    result = internal_channel(url, resolver=resolver).send(make_notification())
    assert result.ok, result.reason
    assert calls == [("hooks.example.com", receiver.port)]  # one lookup, no second chance
    assert connections == [("127.0.0.1", receiver.port)]
    assert receiver.received[0].headers["Host"] == f"hooks.example.com:{receiver.port}"


def test_secret_must_be_long_enough():
    with pytest.raises(ValueError, match="secret"):
        WebhookChannel(name="hook", url="https://hooks.example.com/", secret="short")


def test_the_verification_snippet_in_the_docs_accepts_a_real_delivery(receiver):
    import re
    from pathlib import Path

    docs = (Path(__file__).parents[3] / "docs" / "alerts.md").read_text()
    [snippet] = re.findall(r"```python\n(.*?)```", docs, re.S)
    namespace: dict = {}
    exec(snippet, namespace)
    assert internal_channel(receiver.url).send(make_notification()).ok
    [got] = receiver.received
    assert namespace["verify"](SECRET.encode(), got.headers, got.body)
    assert not namespace["verify"](SECRET.encode(), got.headers, got.body.replace(b"0.71", b"0.99"))
