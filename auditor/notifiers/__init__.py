"""Notification channels: the only outbound I/O of the service.

Every channel has a ``name`` and ``send(notification) -> SendResult``; a send never raises.
Retry timing (backoff, dead letter) is decided by the caller with
``auditor.alerting.backoff``; this package only reports whether a retry can help.
"""

from typing import Protocol

from auditor.notifiers.logchannel import LogChannel
from auditor.notifiers.payload import SCHEMA_VERSION, Notification
from auditor.notifiers.results import Outcome, SendResult
from auditor.notifiers.signing import (
    HEADER_EVENT_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    sign,
    verify,
)
from auditor.notifiers.smtp import EmailChannel
from auditor.notifiers.targets import TargetRefused, address_problem, validate_target
from auditor.notifiers.webhook import WebhookChannel, WebhookTimeouts


class Channel(Protocol):
    @property
    def name(self) -> str: ...  # read-only: the channels are frozen dataclasses

    def send(self, notification: Notification) -> SendResult: ...


__all__ = [
    "HEADER_EVENT_ID",
    "HEADER_SIGNATURE",
    "HEADER_TIMESTAMP",
    "SCHEMA_VERSION",
    "Channel",
    "EmailChannel",
    "LogChannel",
    "Notification",
    "Outcome",
    "SendResult",
    "TargetRefused",
    "WebhookChannel",
    "WebhookTimeouts",
    "address_problem",
    "sign",
    "validate_target",
    "verify",
]
