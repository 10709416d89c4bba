"""The webhook channel: a signed JSON POST to a checked address, with no redirects, within a
total deadline (:mod:`.outbound` does the POST: one lookup, the checked address itself, the
name in the Host header and as the TLS server name, the connection closed at the deadline).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from auditor.notifiers.outbound import post
from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.signing import (
    HEADER_EVENT_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    MIN_SECRET_BYTES,
    sign,
)
from auditor.notifiers.targets import Network, Resolver, TargetRefused

USER_AGENT = "auditor-webhook/1"


@dataclass(frozen=True)
class WebhookTimeouts:
    connect: float = 5.0
    read: float = 10.0
    write: float = 10.0
    pool: float = 5.0

    # The whole attempt (connect + send + read); None: the sum of the operations' limits.
    deadline: float | None = None

    def total(self) -> float:
        if self.deadline is not None:
            return self.deadline
        return self.connect + self.write + self.read

    def per_operation(self) -> dict[str, float]:
        return {"connect": self.connect, "read": self.read, "write": self.write, "pool": self.pool}


@dataclass(frozen=True)
class WebhookChannel:
    """A webhook destination.

    ``allowed`` lists the private networks the operator allows for the whole deployment
    (``AUDITOR_ALLOW_PRIVATE_TARGETS``); it is not a property of the channel, so no project
    key can set it. ``resolver`` and ``clock`` are injectable so tests can play DNS
    rebinding without touching real DNS.
    """

    name: str
    url: str
    secret: str = field(repr=False)
    allowed: tuple[Network, ...] = ()
    timeouts: WebhookTimeouts = WebhookTimeouts()
    resolver: Resolver | None = None  # None: targets.default_resolver()
    clock: Callable[[], float] = time.time
    ca_file: str | None = None  # a private CA for a receiver inside; default: system CAs

    def __post_init__(self) -> None:
        if len(self.secret.encode("utf-8")) < MIN_SECRET_BYTES:
            raise ValueError(
                f"webhook channel {self.name!r}: secret must be at least {MIN_SECRET_BYTES} bytes"
            )

    def send(self, notification: Notification) -> SendResult:
        """POST ``notification``; never raises, never follows a redirect."""
        try:
            return self._send(notification)
        except TargetRefused as refused:
            return SendResult.permanent(str(refused))
        except Exception as error:  # a bug or an unexpected library error: stop, keep the row
            return SendResult.permanent(f"unexpected {type(error).__name__}: {error}")

    def _send(self, notification: Notification) -> SendResult:
        body = notification.to_json_bytes()
        timestamp = str(int(self.clock()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            HEADER_EVENT_ID: notification.event_id,
            HEADER_TIMESTAMP: timestamp,
            HEADER_SIGNATURE: sign(self.secret, notification.event_id, timestamp, body),
        }
        return post(
            self.url,
            body,
            headers,
            self.timeouts.total(),
            what=f"webhook url {self.url!r}",
            allowed=self.allowed,
            resolver=self.resolver,
            ca_file=self.ca_file,
            timeouts=self.timeouts.per_operation(),
        )
