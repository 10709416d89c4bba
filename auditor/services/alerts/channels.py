"""Alert channels of a project: add, list, update, remove.

A channel's kind is a plugin (``auditor.notifiers.kinds``): it validates the settings a person
gives into its typed config, stored as JSON. Secrets in the config (a webhook's signing
secret, an SMTP password) never leave this module except a generated secret, returned once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.config import get_settings
from auditor.domain import NAME
from auditor.errors import Conflict, Invalid, NotFound
from auditor.notifiers.kinds import dump_config, kind_named, load_config, public_config
from auditor.notifiers.kinds import secret_fields as secret_fields_of
from auditor.notifiers.targets import Network
from auditor.services.alerts.common import now, project_id
from auditor.storage.alert_records import ChannelRecord
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class ChannelSpec:
    """A channel as a person writes it: ``config`` holds the kind's settings (for a webhook
    ``url`` and optionally ``secret``; for e-mail ``email_host``, ``email_port``, ...)."""

    name: str
    kind: str
    config: Mapping[str, Any] = field(default_factory=dict, repr=False)
    timeout_seconds: float = 10.0


@dataclass(frozen=True)
class ChannelView:
    """A channel as shown to people: ``settings`` is its config without secrets."""

    name: str
    kind: str
    settings: dict[str, Any]
    timeout_seconds: float
    created_at: datetime


def channel_view(record: ChannelRecord) -> ChannelView:
    try:
        settings = public_config(record.kind, load_config(record.kind, record.config))
    except (ValueError, TypeError):  # a kind removed or a broken row: show its name only
        settings = {}
    return ChannelView(
        record.name, record.kind, settings, float(record.timeout_seconds), record.created_at
    )


def add_channel(
    uow: UnitOfWork,
    project: str,
    spec: ChannelSpec,
    allowed: Sequence[Network] | None = None,
) -> tuple[ChannelView, str | None]:
    """Create a channel; returns its view and a secret the kind generated (a webhook's
    signing secret), shown once.

    Targets (webhook URLs, SMTP hosts) are checked here and again at every send: a private,
    loopback or link-local address is refused unless it lies in one of the ``allowed``
    networks, by default the operator's ``AUDITOR_ALLOW_PRIVATE_TARGETS``.
    """
    if allowed is None:
        allowed = get_settings().private_target_networks
    if not NAME.match(spec.name):
        raise Invalid(f"channel name {spec.name!r} must match {NAME.pattern}", field="name")
    kind = kind_named(spec.kind)
    _check_timeout(spec.timeout_seconds)
    config = kind.validate(spec.name, spec.config, allowed)
    generated = [
        getattr(config, name) for name in secret_fields_of(config) if not spec.config.get(name)
    ]
    with uow:
        owner = project_id(uow, project)
        if uow.alerts.find_channel(owner, spec.name) is not None:
            raise Conflict(f"project {project!r} already has a channel {spec.name!r}")
        record = uow.alerts.insert_channel(
            ChannelRecord(
                id=None,
                project_id=owner,
                name=spec.name,
                kind=spec.kind,
                config=dump_config(config),
                timeout_seconds=spec.timeout_seconds,
                created_at=now(),
            )
        )
        uow.commit()
    return channel_view(record), (generated[0] if generated else None)


@dataclass(frozen=True)
class ChannelChange:
    """Settings to change: ``config`` holds the kind's settings given (the others, secrets
    included, keep their stored value); ``timeout_seconds`` None keeps it."""

    config: Mapping[str, Any] = field(default_factory=dict, repr=False)
    timeout_seconds: float | None = None


def update_channel(
    uow: UnitOfWork,
    project: str,
    name: str,
    change: ChannelChange,
    allowed: Sequence[Network] | None = None,
) -> ChannelView:
    """Change a channel's settings in place (its rules keep sending to it): the stored
    config with the given settings over it is validated again by its kind, so a webhook
    secret or an SMTP password can be rotated alone."""
    if allowed is None:
        allowed = get_settings().private_target_networks
    _check_timeout(change.timeout_seconds)
    given = {key: value for key, value in change.config.items() if value is not None}
    with uow:
        found = uow.alerts.find_channel(project_id(uow, project), name)
        if found is None or found.id is None:
            raise NotFound(f"project {project!r} has no channel {name!r}")
        kind = kind_named(found.kind)
        # Only the settings the kind takes are carried over: a key left in an old row is
        # dropped rather than refused as a setting the user gave.
        stored = {k: v for k, v in found.config.items() if k in kind.settings()}
        config = kind.validate(name, {**stored, **given}, allowed)
        timeout = change.timeout_seconds
        if timeout is None:
            timeout = found.timeout_seconds
        record = dataclasses.replace(found, config=dump_config(config), timeout_seconds=timeout)
        uow.alerts.update_channel(record)
        uow.commit()
    return channel_view(record)


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and not timeout > 0:
        raise Invalid(f"channel timeout must be positive, got {timeout}", field="timeout_seconds")


def list_channels(uow: UnitOfWork, project: str) -> list[ChannelView]:
    with uow:
        records = uow.alerts.list_channels(project_id(uow, project))
    return [channel_view(r) for r in records]


def remove_channel(uow: UnitOfWork, project: str, name: str) -> None:
    with uow:
        found = uow.alerts.find_channel(project_id(uow, project), name)
        if found is None or found.id is None:
            raise NotFound(f"project {project!r} has no channel {name!r}")
        users = uow.alerts.rules_using_channel(found.id)
        if users:
            raise Conflict(
                f"channel {name!r} is used by rules {', '.join(users)}; remove them first"
            )
        uow.alerts.delete_channel(found.id)
        uow.commit()
