"""The e-mail channel: one message per notification through an SMTP server (smtplib).

The Message-ID is derived from the event id, so a message delivered twice (at-least-once)
is recognisably the same message to mail clients and to humans.

The SMTP host is project input, so it is checked like a webhook target (:mod:`.targets`):
resolved once at send time, every address checked, and the connection made to the checked
address itself (the name is still what STARTTLS verifies the certificate against).
"""

from __future__ import annotations

import json
import smtplib
import socket
import ssl
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.signing import HEADER_EVENT_ID
from auditor.notifiers.targets import (
    IPAddress,
    Network,
    Resolver,
    TargetRefused,
    Unresolvable,
    check_host,
)


class _DeadlineSocket(socket.socket):
    """A socket whose every send and receive waits at most what is left until ``ends_at``
    (``time.monotonic``); past it, the next one raises ``TimeoutError``. smtplib reads
    through ``makefile`` (``recv_into``), so a server trickling its replies a byte at a time
    is cut off at the deadline and the send's thread ends (issue 26). After STARTTLS the
    TLS socket keeps the per-operation timeout only."""

    ends_at: float = 0.0

    def _wait(self) -> None:
        left = self.ends_at - time.monotonic()
        if left <= 0:
            raise TimeoutError("the total deadline has passed")
        self.settimeout(left)

    def recv(self, *args: Any) -> bytes:
        self._wait()
        return super().recv(*args)

    def recv_into(self, *args: Any) -> int:
        self._wait()
        return super().recv_into(*args)

    def send(self, *args: Any) -> int:
        self._wait()
        return super().send(*args)

    def sendall(self, *args: Any) -> None:
        self._wait()
        super().sendall(*args)


class _PinnedSMTP(smtplib.SMTP):
    """An SMTP client that connects to one checked address, whatever the name resolves to
    now; ``connect(name, port)`` still records the name for STARTTLS's certificate check.
    Until STARTTLS, every socket operation ends by ``timeout`` seconds after the start."""

    def __init__(self, address: IPAddress, timeout: float) -> None:
        self._address = address
        self._ends_at = time.monotonic() + timeout
        super().__init__(timeout=timeout)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        left = max(self._ends_at - time.monotonic(), 0.001)
        plain = socket.create_connection((str(self._address), port), min(timeout, left))
        wrapped = _DeadlineSocket(plain.family, plain.type, plain.proto, fileno=plain.detach())
        wrapped.ends_at = self._ends_at
        return wrapped


@dataclass(frozen=True)
class EmailChannel:
    name: str
    host: str
    port: int
    sender: str
    recipients: tuple[str, ...]
    starttls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    allowed: tuple[Network, ...] = ()  # the operator's AUDITOR_ALLOW_PRIVATE_TARGETS
    resolver: Resolver | None = None  # None: targets.default_resolver()

    def __post_init__(self) -> None:
        if not self.recipients:
            raise ValueError(f"email channel {self.name!r}: recipients must not be empty")
        if not 0 < self.port < 65536:
            raise ValueError(f"email channel {self.name!r}: port out of range: {self.port}")
        if self.timeout <= 0:
            raise ValueError(f"email channel {self.name!r}: timeout must be positive")
        if (self.username is None) != (self.password is None):
            raise ValueError(f"email channel {self.name!r}: username and password go together")
        if self.username is not None and not self.starttls:
            raise ValueError(
                f"email channel {self.name!r}: login needs starttls (the password would be "
                "sent in clear text)"
            )

    def message(self, notification: Notification) -> EmailMessage:
        message = EmailMessage()
        message["Subject"] = notification.summary()[:200]
        message["From"] = self.sender
        message["To"] = ", ".join(self.recipients)
        message["Message-ID"] = f"<{notification.event_id}@auditor.alerts>"
        message[HEADER_EVENT_ID] = notification.event_id
        pretty = json.dumps(notification.to_dict(), indent=2, sort_keys=True)
        message.set_content(f"{notification.summary()}\n\n{notification.note}\n\n{pretty}\n")
        return message

    def send(self, notification: Notification) -> SendResult:
        """Deliver one message; never raises."""
        try:
            addresses = check_host(self.host, self.port, self.allowed, self.resolver)
        except Unresolvable as error:
            return SendResult.retryable(str(error))
        except TargetRefused as error:
            return SendResult.permanent(str(error))
        try:
            with _PinnedSMTP(addresses[0], self.timeout) as client:
                client.connect(self.host, self.port)
                if self.starttls:
                    client.starttls(context=ssl.create_default_context())
                if self.username is not None and self.password is not None:
                    client.login(self.username, self.password)
                refused = client.send_message(self.message(notification))
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _ in error.recipients.values()]
            return _by_code(min(codes, default=550), f"all recipients refused: {error.recipients}")
        except smtplib.SMTPResponseException as error:
            return _by_code(error.smtp_code, f"SMTP {error.smtp_code}: {error.smtp_error!r}")
        except smtplib.SMTPNotSupportedError as error:
            return SendResult.permanent(f"SMTP server does not support it: {error}")
        except (smtplib.SMTPException, OSError) as error:  # connection, timeout, disconnect
            return SendResult.retryable(f"SMTP transport error: {error!r}")
        except Exception as error:
            return SendResult.permanent(f"unexpected {type(error).__name__}: {error}")
        if refused:
            # Some recipients took it: resending would duplicate it for them.
            return SendResult.success(f"delivered; refused by some recipients: {refused}")
        return SendResult.success("delivered")


def _by_code(code: int, reason: str) -> SendResult:
    if 400 <= code < 500:
        return SendResult.retryable(reason, code)
    return SendResult.permanent(reason, code)
