"""Alert channel kinds as plugins: each kind is one module implementing ``ChannelKind``.

A kind validates the settings a person gives (``validate``: raw mapping -> its typed config,
or ``Invalid`` naming the field; types are checked, not converted), describes a config without
its secrets (``describe``: what the API and CLI show), reads a setting typed as text
(``from_text``: the CLI's ``--set key=value``) and delivers one notice with a stored config
(``deliver``). The config is a frozen dataclass stored as JSON in ``alert_channels.config``;
fields whose metadata says ``secret`` are never shown and, when the kind generated them,
returned once at creation. ``DescribedKind`` (``base``) gives ``describe``, ``settings`` and
``from_text`` from the dataclass.

Adding a kind: write ``auditor/notifiers/kinds/<kind>.py`` with a config dataclass and a
``KIND`` object, and add one line to ``KINDS`` below. No migration (see docs/alerts.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from auditor.errors import Invalid, excerpt
from auditor.notifiers.kinds import email, log, slack, webhook
from auditor.notifiers.kinds.base import check_keys
from auditor.notifiers.payload import Notification
from auditor.notifiers.results import SendResult
from auditor.notifiers.targets import Network


class ChannelKind(Protocol):
    name: str
    config_type: type[Any]

    def validate(self, channel: str, raw: Mapping[str, Any], allowed: Sequence[Network]) -> Any:
        """The typed config of ``raw`` (None values count as absent); raises ``Invalid``
        with ``field`` set to the setting at fault."""
        ...

    def describe(self, config: Any) -> dict[str, Any]:
        """The settings of ``config`` people may see: no secret."""
        ...

    def settings(self) -> tuple[str, ...]:
        """The names of the settings the kind takes."""
        ...

    def from_text(self, key: str, value: str) -> Any:
        """A setting typed as text as ``validate`` takes it (raises ``Invalid``)."""
        ...

    def deliver(
        self,
        notification: Notification,
        config: Any,
        deadline: float,
        *,
        channel: str,
        allowed: Sequence[Network],
    ) -> SendResult:
        """Send one notice within ``deadline`` seconds per operation; never raises."""
        ...


KINDS: dict[str, ChannelKind] = {
    "webhook": webhook.KIND,
    "email": email.KIND,
    "log": log.KIND,
    "slack": slack.KIND,
}


def kind_named(name: str) -> ChannelKind:
    found = KINDS.get(name)
    if found is None:
        raise Invalid(
            f"channel kind must be one of {', '.join(KINDS)}, got {excerpt(name)}", field="kind"
        )
    return found


def secret_fields(config: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(config) if f.metadata.get("secret"))


def dump_config(config: Any) -> dict[str, Any]:
    """The JSON stored for ``config``."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in dataclasses.asdict(config).items()
    }


def load_config(kind: str, stored: Mapping[str, Any]) -> Any:
    """The typed config of a stored JSON object (raises ValueError/TypeError on a broken one)."""
    config_type = kind_named(kind).config_type
    names = {f.name: f for f in dataclasses.fields(config_type)}
    values = {
        key: tuple(value) if isinstance(value, list) else value
        for key, value in stored.items()
        if key in names
    }
    return config_type(**values)


def public_config(kind: str, config: Any) -> dict[str, Any]:
    """The config as people see it: the kind's description, without secrets."""
    return kind_named(kind).describe(config)


__all__ = [
    "KINDS",
    "ChannelKind",
    "check_keys",
    "dump_config",
    "kind_named",
    "load_config",
    "public_config",
    "secret_fields",
]
