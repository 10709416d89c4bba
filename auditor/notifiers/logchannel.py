"""The log channel: a notification as one structured log record (Python logging)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult

_LEVELS = {"info": logging.INFO, "warning": logging.WARNING, "critical": logging.CRITICAL}


@dataclass(frozen=True)
class LogChannel:
    """Logs to ``logger_name``; firing/repeat at the rule's severity, resolved at INFO."""

    name: str = "log"
    logger_name: str = "auditor.alerts"

    def send(self, notification: Notification) -> SendResult:
        level = logging.INFO
        if notification.kind != "resolved":
            level = _LEVELS.get(notification.severity, logging.WARNING)
        try:
            logging.getLogger(self.logger_name).log(
                level,
                "%s [event %s]",
                notification.summary(),
                notification.event_id,
                extra={"notification": notification.to_dict()},
            )
        except Exception as error:  # a broken handler must not break the sender loop
            return SendResult.retryable(f"logging failed: {error!r}")
        return SendResult.success("logged")
