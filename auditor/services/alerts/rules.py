"""Alert rules of a project: add (one or the ready-made defaults), list, remove, enable.

One function = one unit of work. A bad rule raises ``Invalid`` with ``field`` naming the
rule's field as people write it (the API body's name); a name in use ``Conflict``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from auditor.alerting import Condition, ConditionKind, Rule, Severity, default_rules
from auditor.alerting.defaults import label_studio_rule
from auditor.domain import NAME
from auditor.errors import Conflict, Invalid
from auditor.notifiers.kinds import dump_config, kind_named
from auditor.services.alerts.common import now, own_rule, parse_subject, project_id
from auditor.services.alerts.values import rule_of, rule_record
from auditor.storage.alert_records import ChannelRecord
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class RuleSpec:
    """A rule as a person writes it. Exactly one of threshold (with a condition other than
    drop) or drop + lookback (condition drop)."""

    metric: str
    condition: str
    threshold: float | None = None
    drop: float | None = None
    lookback: timedelta | None = None
    subject: str = "project"
    scope: str = "cumulative"
    name: str | None = None
    min_n: int = 10
    for_: timedelta = timedelta(0)
    keep_firing_for: timedelta = timedelta(0)
    severity: str = "warning"
    channels: tuple[str, ...] = ()
    repeat_interval: timedelta | None = timedelta(hours=24)
    enabled: bool = True
    margin: float | None = None  # bound conditions: the widest interval judged
    z: float | None = None  # drop: the standard errors the drop must also reach


def _enum(kind: type, value: str, field: str) -> object:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)  # type: ignore[attr-defined]
        raise Invalid(f"{field} must be one of {choices}, got {value!r}", field=field) from None


def build_rule(project: str, spec: RuleSpec) -> Rule:
    """The validated ``Rule`` of ``spec``; its id is ``<project>:<name>``."""
    name = spec.name or f"{spec.metric}-{uuid.uuid4().hex[:6]}"
    if not NAME.match(name):
        raise Invalid(f"rule name {name!r} must match {NAME.pattern}", field="name")
    condition = Condition(
        _enum(ConditionKind, spec.condition, "condition"),  # type: ignore[arg-type]
        threshold=spec.threshold,
        drop=spec.drop,
        lookback=spec.lookback,
        margin=spec.margin,
        z=spec.z,
    )
    return Rule(
        id=f"{project}:{name}",
        project=project,
        metric=spec.metric,
        subject=parse_subject(spec.subject),
        condition=condition,
        scope=spec.scope,
        min_n=spec.min_n,
        for_=spec.for_,
        keep_firing_for=spec.keep_firing_for,
        severity=_enum(Severity, spec.severity, "severity"),  # type: ignore[arg-type]
        channels=tuple(spec.channels),
        repeat_interval=spec.repeat_interval,
        enabled=spec.enabled,
    )


def _insert_rules(uow: UnitOfWork, project: str, rules: Sequence[Rule]) -> None:
    owner = project_id(uow, project)
    for rule in rules:
        if uow.alerts.find_rule(rule.id) is not None:
            raise Conflict(f"rule {rule.id!r} already exists")
        channel_ids = []
        for name in rule.channels:
            channel = uow.alerts.find_channel(owner, name)
            if channel is None or channel.id is None:
                raise Invalid(
                    f"rule {rule.id!r}: project {project!r} has no channel {name!r}",
                    field="channels",
                )
            channel_ids.append(channel.id)
        uow.alerts.insert_rule(rule_record(rule, owner, now()), channel_ids)


def add_rule(uow: UnitOfWork, project: str, spec: RuleSpec) -> Rule:
    rule = build_rule(project, spec)
    with uow:
        _insert_rules(uow, project, [rule])
        uow.commit()
    return rule


def install_default_rules(
    uow: UnitOfWork, project: str, channels: Sequence[str] = ()
) -> list[Rule]:
    """The ready-made rules (``auditor.alerting.default_rules``); existing ones are kept and
    get ``channels`` they lack (a new project's defaults send to 'log' only)."""
    with uow:
        found = project_id(uow, project)
        uses = uow.label_studio_settings.uses_label_studio(found)
        wanted = default_rules(project, tuple(channels), label_studio=uses)
        missing = [r for r in wanted if uow.alerts.find_rule(r.id) is None]
        _insert_rules(uow, project, missing)
        for rule in wanted:
            if rule in missing or not channels:
                continue
            record = uow.alerts.find_rule(rule.id)
            have = set(record.channels) if record is not None else set()
            ids = []
            for name in channels:
                channel = uow.alerts.find_channel(found, name)
                if channel is None or channel.id is None:
                    raise Invalid(f"project {project!r} has no channel {name!r}", field="channels")
                if name not in have:
                    ids.append(channel.id)
            uow.alerts.add_rule_channels(rule.id, ids)
        uow.commit()
    return missing


DEFAULT_CHANNEL = "log"


def add_default_alerts(uow: UnitOfWork, project: str) -> list[Rule]:
    """Inside the caller's open transaction (``create_project``'s ``then``): a ``log`` channel
    and the ready-made rules sending to it, so a new project is watched from its first label.
    Webhook or e-mail channels are added later (``auditor alerts channel add``) and given to
    the rules with ``auditor alerts defaults`` or a rule of one's own."""
    owner = project_id(uow, project)
    if uow.alerts.find_channel(owner, DEFAULT_CHANNEL) is None:
        config = kind_named("log").validate(DEFAULT_CHANNEL, {}, ())
        uow.alerts.insert_channel(
            ChannelRecord(
                id=None,
                project_id=owner,
                name=DEFAULT_CHANNEL,
                kind="log",
                config=dump_config(config),
                timeout_seconds=10.0,
                created_at=now(),
            )
        )
    wanted = default_rules(project, (DEFAULT_CHANNEL,))
    missing = [r for r in wanted if uow.alerts.find_rule(r.id) is None]
    _insert_rules(uow, project, missing)
    return missing


def install_label_studio_rule(uow: UnitOfWork, project: str) -> Rule | None:
    """The default rule on refused Label Studio webhook calls, when the project lacks it (a
    project that takes the webhook gets it with its key); None when it was there."""
    rule = label_studio_rule(project)
    with uow:
        project_id(uow, project)
        if uow.alerts.find_rule(rule.id) is not None:
            return None
        _insert_rules(uow, project, [rule])
        uow.commit()
    return rule


def list_rules(uow: UnitOfWork, project: str) -> list[Rule]:
    with uow:
        records = uow.alerts.list_rules(project_id(uow, project))
    return [rule_of(r, project) for r in records]


def remove_rule(uow: UnitOfWork, project: str, rule_id: str) -> str:
    """Delete a rule and its states (the log and the outbox are kept as history)."""
    with uow:
        full = own_rule(uow, project, rule_id)
        uow.alerts.delete_rule(full)
        uow.commit()
    return full


def set_rule_enabled(uow: UnitOfWork, project: str, rule_id: str, enabled: bool) -> str:
    with uow:
        full = own_rule(uow, project, rule_id)
        uow.alerts.set_rule_enabled(full, enabled)
        uow.commit()
    return full
