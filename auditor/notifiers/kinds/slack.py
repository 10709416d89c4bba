"""The Slack kind: a Slack incoming webhook (``{"text": ...}``), the notifier recipe's
worked example (docs/architecture.md, "An alert channel kind").

The URL is the credential (whoever has it can post to the channel), so it is a secret: never
shown, only its host. It is checked like a webhook's (:mod:`..targets`, the same private-
address rules) and posted to through :mod:`..outbound` (the checked address, no redirects,
a total deadline)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.errors import Invalid
from auditor.notifiers.kinds.base import DescribedKind, check_keys, given, text
from auditor.notifiers.outbound import post
from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.targets import Network, TargetRefused, parse_target, validate_target

USER_AGENT = "auditor-slack/1"


@dataclass(frozen=True)
class SlackConfig:
    url: str = field(repr=False, metadata={"secret": True})


def message(notification: Notification) -> bytes:
    """The body Slack takes: one line of text (Slack renders ``<``, ``>``, ``&`` escaped)."""
    line = notification.summary()
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        line = line.replace(raw, escaped)
    return json.dumps({"text": line}, ensure_ascii=False).encode("utf-8")


class SlackKind(DescribedKind):
    name = "slack"
    config_type = SlackConfig

    def validate(
        self, channel: str, raw: Mapping[str, Any], allowed: Sequence[Network]
    ) -> SlackConfig:
        raw = given(raw)
        check_keys(channel, self.name, raw, ("url",))
        where = f"slack channel {channel!r}"
        url = text(raw, "url", where)
        if url is None:
            raise Invalid(f"{where} needs url (the incoming webhook's URL)", field="url")
        try:
            validate_target(url, allowed)
        except TargetRefused as refused:
            raise Invalid(str(refused).replace(url, "<url>"), field="url") from None
        return SlackConfig(url)

    def describe(self, config: Any) -> dict[str, Any]:
        """Only the URL's host: the rest of it is the credential."""
        return {"host": parse_target(config.url).host}

    def deliver(
        self,
        notification: Notification,
        config: SlackConfig,
        deadline: float,
        *,
        channel: str,
        allowed: Sequence[Network],
    ) -> SendResult:
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        result = post(
            config.url,
            message(notification),
            headers,
            deadline,
            what=f"slack channel {channel!r}",
            allowed=allowed,
        )
        # Never let the URL (the credential) reach the outbox's error column or a log.
        return dataclasses.replace(result, reason=result.reason.replace(config.url, "<url>"))


KIND = SlackKind()
