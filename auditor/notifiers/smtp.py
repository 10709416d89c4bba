"""The e-mail channel: one message per notification through an SMTP server (smtplib).

The Message-ID is derived from the event id, so a message delivered twice (at-least-once)
is recognisably the same message to mail clients and to humans.
"""

from __future__ import annotations

import json
import smtplib
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage

from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.signing import HEADER_EVENT_ID


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
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as client:
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
