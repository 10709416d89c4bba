"""The e-mail kind: one message per notice through SMTP (``auditor.notifiers.smtp``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.errors import Invalid
from auditor.notifiers.kinds.base import check_keys, given
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


class EmailKind:
    name = "email"
    config_type = EmailConfig

    def validate(
        self, channel: str, raw: Mapping[str, Any], allowed: Sequence[Network]
    ) -> EmailConfig:
        raw = given(raw)
        check_keys(channel, self.name, raw, _KEYS)
        config = EmailConfig(
            email_host=raw.get("email_host") or "",
            email_port=int(raw.get("email_port") or DEFAULT_PORT),
            email_from=raw.get("email_from") or "",
            email_to=tuple(raw.get("email_to") or ()),
            starttls=bool(raw.get("starttls", False)),
            username=raw.get("username"),
            password=raw.get("password"),
        )
        where = f"email channel {channel!r}"
        if not config.email_to:
            raise Invalid(f"{where}: recipients must not be empty", field="email_to")
        if not 0 < config.email_port < 65536:
            raise Invalid(f"{where}: port out of range: {config.email_port}", field="email_port")
        if (config.username is None) != (config.password is None):
            raise Invalid(f"{where}: username and password go together", field="password")
        if config.username is not None and not config.starttls:
            raise Invalid(
                f"{where}: login needs starttls (the password would be sent in clear text)",
                field="starttls",
            )
        if not config.email_host or not config.email_from:
            field_name = "email_host" if not config.email_host else "email_from"
            raise Invalid(f"{where} needs a host and a from address", field=field_name)
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
