"""The webhook kind: a signed JSON POST (``auditor.notifiers.webhook``)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.errors import Invalid
from auditor.notifiers.kinds.base import DescribedKind, check_keys, given, text
from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.signing import MIN_SECRET_BYTES
from auditor.notifiers.targets import Network, TargetRefused, validate_target
from auditor.notifiers.webhook import WebhookChannel, WebhookTimeouts


@dataclass(frozen=True)
class WebhookConfig:
    url: str
    # Never logged, never returned by the API; shown once, when the channel is created.
    secret: str = field(repr=False, metadata={"secret": True})


class WebhookKind(DescribedKind):
    name = "webhook"
    config_type = WebhookConfig

    def validate(
        self, channel: str, raw: Mapping[str, Any], allowed: Sequence[Network]
    ) -> WebhookConfig:
        raw = given(raw)
        check_keys(channel, self.name, raw, ("url", "secret"))
        where = f"webhook channel {channel!r}"
        url = text(raw, "url", where)
        if url is None:
            raise Invalid(f"{where} needs url (where to POST)", field="url")
        try:
            validate_target(url, allowed)
        except TargetRefused as refused:
            raise Invalid(str(refused), field="url") from None
        secret = text(raw, "secret", where, max_length=1000) or secrets.token_urlsafe(32)
        if len(secret.encode()) < MIN_SECRET_BYTES:
            raise Invalid(
                f"{where}: secret must be at least {MIN_SECRET_BYTES} bytes", field="secret"
            )
        return WebhookConfig(url, secret)

    def deliver(
        self,
        notification: Notification,
        config: WebhookConfig,
        deadline: float,
        *,
        channel: str,
        allowed: Sequence[Network],
    ) -> SendResult:
        timeouts = WebhookTimeouts(
            connect=min(5.0, deadline),
            read=deadline,
            write=deadline,
            pool=deadline,
            deadline=deadline,  # in all: the send closes its connection when it passes
        )
        sender = WebhookChannel(
            channel, config.url, config.secret, allowed=tuple(allowed), timeouts=timeouts
        )
        return sender.send(notification)


KIND = WebhookKind()
