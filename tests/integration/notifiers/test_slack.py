"""The Slack kind (the notifier recipe's worked example) against a real receiver on loopback."""

from __future__ import annotations

import ipaddress
import json

import pytest

from auditor.errors import Invalid
from auditor.notifiers.kinds import KINDS, kind_named
from tests.integration.notifiers.conftest import make_notification

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def test_a_notice_arrives_as_slack_text(receiver) -> None:
    kind = kind_named("slack")
    config = kind.validate("ops", {"url": receiver.url}, LOOPBACK)
    notification = make_notification(reason="ci_low 0.61 < 0.667")
    result = kind.deliver(notification, config, 5.0, channel="ops", allowed=LOOPBACK)
    assert result.ok, result.reason
    (received,) = receiver.received
    assert received.headers["Content-Type"] == "application/json"
    text = json.loads(received.body)["text"]
    assert text.startswith("[FIRING] warning: rho (cumulative) for project in p1 = 0.710")
    assert "ci_low 0.61 &lt; 0.667" in text  # Slack's escaping
    # the URL is the credential: only its host is shown
    assert kind.describe(config) == {"host": "127.0.0.1"}


def test_failures_are_classified_and_never_show_the_url(receiver) -> None:
    receiver.script = [503]
    kind = KINDS["slack"]
    config = kind.validate("ops", {"url": receiver.url}, LOOPBACK)
    result = kind.deliver(make_notification(), config, 5.0, channel="ops", allowed=LOOPBACK)
    assert result.outcome.value == "retryable" and result.status_code == 503
    assert receiver.url not in result.reason


def test_private_targets_are_refused_unless_allowed() -> None:
    with pytest.raises(Invalid) as refused:
        kind_named("slack").validate("ops", {"url": "http://127.0.0.1:9/x"}, ())
    assert refused.value.field == "url" and "loopback" in str(refused.value)
    assert "127.0.0.1:9/x" not in str(refused.value)
    with pytest.raises(Invalid) as unknown:
        kind_named("slack").validate("ops", {"url": "http://127.0.0.1/", "secret": "x"}, LOOPBACK)
    assert unknown.value.field == "secret"
