"""The e-mail channel against a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import ipaddress
import json
import socket
from email import message_from_bytes, policy

import pytest
from aiosmtpd.controller import Controller

from auditor.notifiers import HEADER_EVENT_ID, EmailChannel, Outcome
from tests.integration.notifiers.conftest import make_notification


class Inbox:
    """An aiosmtpd handler that keeps what it receives and refuses one address."""

    def __init__(self) -> None:
        self.envelopes: list = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("nobody@"):
            return "550 5.1.1 no such user"
        if address.startswith("busy@"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp_server():
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield inbox, controller.port
    controller.stop()


LOOPBACK_NET = (ipaddress.ip_network("127.0.0.0/8"),)  # the operator allows the test server


def channel(port: int, recipients=("ops@example.org",)) -> EmailChannel:
    return EmailChannel(
        name="mail", host="127.0.0.1", port=port, sender="auditor@example.org",
        recipients=tuple(recipients), timeout=5.0, allowed=LOOPBACK_NET,
    )  # fmt: skip


def test_an_email_arrives(smtp_server):
    inbox, port = smtp_server
    notification = make_notification(kind="resolved", note="recovered")
    result = channel(port, ["ops@example.org", "lead@example.org"]).send(notification)
    assert result.outcome is Outcome.OK, result.reason
    [envelope] = inbox.envelopes
    assert envelope.mail_from == "auditor@example.org"
    assert envelope.rcpt_tos == ["ops@example.org", "lead@example.org"]
    message = message_from_bytes(envelope.original_content, policy=policy.default)
    assert message[HEADER_EVENT_ID] == notification.event_id
    assert message["Message-ID"] == f"<{notification.event_id}@auditor.alerts>"
    assert message["Subject"].startswith("[RESOLVED] warning: rho (cumulative) for project")
    text = message.get_content()
    assert json.loads(text[text.index("{") :]) == notification.to_dict()


def test_refused_recipient_is_permanent_and_busy_is_retryable(smtp_server):
    inbox, port = smtp_server
    refused = channel(port, ["nobody@example.org"]).send(make_notification())
    assert refused.outcome is Outcome.PERMANENT and refused.status_code == 550
    busy = channel(port, ["busy@example.org"]).send(make_notification())
    assert busy.outcome is Outcome.RETRYABLE and busy.status_code == 451
    partly = channel(port, ["ops@example.org", "nobody@example.org"]).send(make_notification())
    assert partly.ok and "nobody@example.org" in partly.reason  # resending would duplicate
    assert [e.rcpt_tos for e in inbox.envelopes] == [["ops@example.org"]]


def test_no_server_is_retryable():
    result = channel(free_port()).send(make_notification())
    assert result.outcome is Outcome.RETRYABLE and "transport" in result.reason


def test_starttls_against_a_server_without_it_is_permanent(smtp_server):
    _, port = smtp_server
    tls = EmailChannel(name="mail", host="127.0.0.1", port=port, sender="a@example.org",
                       recipients=("ops@example.org",), starttls=True,
                       allowed=LOOPBACK_NET)  # fmt: skip
    result = tls.send(make_notification())
    assert result.outcome is Outcome.PERMANENT and "not support" in result.reason


def test_bad_channels_are_refused():
    with pytest.raises(ValueError, match="recipients"):
        EmailChannel(name="m", host="h", port=25, sender="a@b", recipients=())
    with pytest.raises(ValueError, match="clear text"):
        EmailChannel(name="m", host="h", port=25, sender="a@b", recipients=("c@d",),
                     username="u", password="p")  # fmt: skip
    with pytest.raises(ValueError, match="go together"):
        EmailChannel(name="m", host="h", port=25, sender="a@b", recipients=("c@d",),
                     username="u", starttls=True)  # fmt: skip
