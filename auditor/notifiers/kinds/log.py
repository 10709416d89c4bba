"""The log kind: a notice as one log record (``auditor.notifiers.logchannel``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.notifiers.kinds.base import DescribedKind, check_keys, given
from auditor.notifiers.logchannel import LogChannel
from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.targets import Network


@dataclass(frozen=True)
class LogConfig:
    """No settings: the record goes to the ``auditor.alerts`` logger."""


class LogKind(DescribedKind):
    name = "log"
    config_type = LogConfig

    def validate(
        self, channel: str, raw: Mapping[str, Any], allowed: Sequence[Network]
    ) -> LogConfig:
        check_keys(channel, self.name, given(raw), ())
        return LogConfig()

    def deliver(
        self,
        notification: Notification,
        config: LogConfig,
        deadline: float,
        *,
        channel: str,
        allowed: Sequence[Network],
    ) -> SendResult:
        return LogChannel(channel).send(notification)


KIND = LogKind()
