"""The e-mail kind: one message per notice through SMTP (``auditor.notifiers.smtp``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.errors import Invalid
from auditor.notifiers.addresses import check_address
from auditor.notifiers.kinds.base import (
    DescribedKind,
    check_keys,
    flag,
    given,
    integer,
    text,
    text_list,
)
from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.smtp import EmailChannel
from auditor.notifiers.targets import Network, TargetRefused, check_host

DEFAULT_PORT = 25
_KEYS = ("email_host", "email_port", "email_from", "email_to", "starttls", "username", "password")


@dataclass(frozen=True)
class EmailConfig:
    email_host: str
    email_port: int
    email_from: str
    email_to: tuple[str, ...]
    starttls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False, metadata={"secret": True})


class EmailKind(DescribedKind):
    name = "email"
    config_type = EmailConfig

    def validate(
        self, channel: str, raw: Mapping[str, Any], allowed: Sequence[Network]
    ) -> EmailConfig:
        raw = given(raw)
        check_keys(channel, self.name, raw, _KEYS)
        where = f"email channel {channel!r}"
        host = text(raw, "email_host", where, max_length=255)
        sender = text(raw, "email_from", where, max_length=320)
        port = integer(raw, "email_port", where, DEFAULT_PORT)
        config = EmailConfig(
            email_host=host or "",
            email_port=port,
            email_from=sender or "",
            email_to=text_list(raw, "email_to", where),
            starttls=flag(raw, "starttls", where, False),
            username=text(raw, "username", where, max_length=200),
            password=text(raw, "password", where, max_length=200),
        )
        if host is None:
            raise Invalid(f"{where} needs email_host (the SMTP server)", field="email_host")
        if sender is None:
            raise Invalid(f"{where} needs email_from (the sender address)", field="email_from")
        if not config.email_to:
            raise Invalid(f"{where} needs email_to (one recipient or more)", field="email_to")
        check_address(config.email_from, "email_from", where)
        for recipient in config.email_to:
            check_address(recipient, "email_to", where)
        if not 0 < config.email_port < 65536:
            raise Invalid(
                f"{where}: email_port must be 1 to 65535, got {config.email_port}",
                field="email_port",
            )
        if (config.username is None) != (config.password is None):
            missing = "password" if config.password is None else "username"
            raise Invalid(f"{where}: username and password go together", field=missing)
        if config.username is not None and not config.starttls:
            raise Invalid(
                f"{where}: login needs starttls (the password would be sent in clear text)",
                field="starttls",
            )
        try:
            check_host(config.email_host, config.email_port, allowed)
        except TargetRefused as refused:
            raise Invalid(str(refused), field="email_host") from None
        return config

    def deliver(
        self,
        notification: Notification,
        config: EmailConfig,
        deadline: float,
        *,
        channel: str,
        allowed: Sequence[Network],
    ) -> SendResult:
        sender = EmailChannel(
            channel,
            config.email_host,
            config.email_port,
            config.email_from,
            config.email_to,
            starttls=config.starttls,
            username=config.username,
            password=config.password,
            timeout=deadline,
            allowed=tuple(allowed),
        )
        return sender.send(notification)


KIND = EmailKind()
