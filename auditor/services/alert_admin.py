"""Managing alerts: channels, rules, silences, and reading states and history.

One function = one unit of work; the CLI and the API call these and render the views. Every
check raises ``Invalid`` / ``NotFound`` / ``Conflict`` with a message naming the field.
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.alerting import (
    Condition,
    ConditionKind,
    Rule,
    Severity,
    Silence,
    Subject,
    SubjectKind,
    SubjectSelector,
    default_rules,
)
from auditor.config import get_settings
from auditor.domain import time_out_of_range
from auditor.notifiers import EmailChannel, TargetRefused, validate_target
from auditor.notifiers.signing import MIN_SECRET_BYTES
from auditor.notifiers.targets import Network, check_host
from auditor.services import Conflict, Invalid, NotFound
from auditor.services.alerts import rule_from_row, rule_to_values
from auditor.storage import alert_repository as repo
from auditor.storage.unit_of_work import UnitOfWork

_NAME = re.compile(r"^[a-z][a-z0-9_.:-]{0,99}$")
CHANNEL_KINDS = ("webhook", "email", "log")


def _now() -> datetime:
    return datetime.now(UTC)


def _project_id(uow: UnitOfWork, project: str) -> int:
    found = repo.project_id_of(uow.session, project)
    if found is None:
        raise NotFound(f"no project {project!r}")
    return found


def parse_subject(text: str) -> SubjectSelector:
    """'project', 'every_rater', 'rater:ID' or 'model:ID' -> a selector."""
    kind, sep, ref = text.partition(":")
    try:
        selector_kind = SubjectKind(kind)
        return SubjectSelector(selector_kind, ref if sep else "")
    except ValueError:
        raise Invalid(
            f"subject must be project, every_rater, rater:ID or model:ID, got {text!r}"
        ) from None


# --- channels -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChannelView:
    """A channel as shown to people; never carries the secret or the password."""

    name: str
    kind: str
    url: str | None
    email_host: str | None
    email_port: int | None
    email_from: str | None
    email_to: tuple[str, ...]
    timeout_seconds: float
    created_at: datetime


def _channel_view(row: dict[str, Any]) -> ChannelView:
    return ChannelView(
        row["name"],
        row["kind"],
        row["url"],
        row["email_host"],
        row["email_port"],
        row["email_from"],
        tuple(row["email_to"] or ()),
        float(row["timeout_seconds"]),
        row["created_at"],
    )


@dataclass(frozen=True)
class ChannelSpec:
    name: str
    kind: str
    url: str | None = None
    secret: str | None = field(default=None, repr=False)  # webhook: generated when None
    email_host: str | None = None
    email_port: int | None = None
    email_from: str | None = None
    email_to: tuple[str, ...] = ()
    starttls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout_seconds: float = 10.0


def add_channel(
    uow: UnitOfWork,
    project: str,
    spec: ChannelSpec,
    allowed: Sequence[Network] | None = None,
) -> tuple[ChannelView, str | None]:
    """Create a channel; returns its view and, for a webhook, the signing secret (shown once).

    Webhook URLs and SMTP hosts are checked here (and again at every send): a private,
    loopback or link-local address is refused unless it lies in one of the ``allowed``
    networks, by default the operator's ``AUDITOR_ALLOW_PRIVATE_TARGETS``.
    """
    if allowed is None:
        allowed = get_settings().private_target_networks
    if not _NAME.match(spec.name):
        raise Invalid(f"channel name {spec.name!r} must match {_NAME.pattern}")
    if spec.kind not in CHANNEL_KINDS:
        raise Invalid(f"channel kind must be one of {', '.join(CHANNEL_KINDS)}, got {spec.kind!r}")
    if not spec.timeout_seconds > 0:
        raise Invalid(f"channel timeout must be positive, got {spec.timeout_seconds}")
    secret = None
    values: dict[str, Any] = {"name": spec.name, "kind": spec.kind}
    if spec.kind == "webhook":
        if not spec.url:
            raise Invalid("a webhook channel needs --url")
        try:
            validate_target(spec.url, allowed)
        except TargetRefused as refused:
            raise Invalid(str(refused)) from None
        secret = spec.secret or secrets.token_urlsafe(32)
        if len(secret.encode()) < MIN_SECRET_BYTES:
            raise Invalid(f"webhook secret must be at least {MIN_SECRET_BYTES} bytes")
        values.update(url=spec.url, secret=secret)
    elif spec.kind == "email":
        try:
            EmailChannel(
                spec.name,
                spec.email_host or "",
                spec.email_port or 0,
                spec.email_from or "",
                tuple(spec.email_to),
                spec.starttls,
                spec.username,
                spec.password,
                spec.timeout_seconds,
            )
        except ValueError as error:
            raise Invalid(str(error)) from None
        if not spec.email_host or not spec.email_from:
            raise Invalid(f"email channel {spec.name!r} needs a host and a from address")
        try:
            check_host(spec.email_host, spec.email_port or 25, allowed)
        except TargetRefused as refused:
            raise Invalid(str(refused)) from None
        values.update(
            email_host=spec.email_host,
            email_port=spec.email_port,
            email_from=spec.email_from,
            email_to=list(spec.email_to),
            starttls=spec.starttls,
            username=spec.username,
            password=spec.password,
        )
    values["timeout_seconds"] = spec.timeout_seconds
    with uow:
        project_id = _project_id(uow, project)
        if repo.find_channel(uow.session, project_id, spec.name) is not None:
            raise Conflict(f"project {project!r} already has a channel {spec.name!r}")
        repo.insert_channel(uow.session, {**values, "project_id": project_id, "created_at": _now()})
        row = repo.find_channel(uow.session, project_id, spec.name)
        uow.commit()
    assert row is not None
    return _channel_view(row), secret


def list_channels(uow: UnitOfWork, project: str) -> list[ChannelView]:
    with uow:
        rows = repo.list_channels(uow.session, _project_id(uow, project))
    return [_channel_view(r) for r in rows]


def remove_channel(uow: UnitOfWork, project: str, name: str) -> None:
    with uow:
        project_id = _project_id(uow, project)
        row = repo.find_channel(uow.session, project_id, name)
        if row is None:
            raise NotFound(f"project {project!r} has no channel {name!r}")
        users = repo.rules_using_channel(uow.session, row["id"])
        if users:
            raise Conflict(
                f"channel {name!r} is used by rules {', '.join(users)}; remove them first"
            )
        repo.delete_channel(uow.session, row["id"])
        uow.commit()


# --- rules ----------------------------------------------------------------------------------


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


def build_rule(project: str, spec: RuleSpec) -> Rule:
    """The validated ``Rule`` of ``spec``; its id is ``<project>:<name>``."""
    name = spec.name or f"{spec.metric}-{uuid.uuid4().hex[:6]}"
    if not _NAME.match(name):
        raise Invalid(f"rule name {name!r} must match {_NAME.pattern}")
    try:
        return Rule(
            id=f"{project}:{name}",
            project=project,
            metric=spec.metric,
            subject=parse_subject(spec.subject),
            condition=Condition(
                ConditionKind(spec.condition),
                threshold=spec.threshold,
                drop=spec.drop,
                lookback=spec.lookback,
            ),
            scope=spec.scope,
            min_n=spec.min_n,
            for_=spec.for_,
            keep_firing_for=spec.keep_firing_for,
            severity=Severity(spec.severity),
            channels=tuple(spec.channels),
            repeat_interval=spec.repeat_interval,
            enabled=spec.enabled,
        )
    except ValueError as error:
        raise Invalid(str(error)) from None


def _insert_rules(uow: UnitOfWork, project: str, rules: Sequence[Rule]) -> None:
    project_id = _project_id(uow, project)
    for rule in rules:
        if repo.find_rule(uow.session, rule.id) is not None:
            raise Conflict(f"rule {rule.id!r} already exists")
        channel_ids = []
        for name in rule.channels:
            channel = repo.find_channel(uow.session, project_id, name)
            if channel is None:
                raise Invalid(f"rule {rule.id!r}: project {project!r} has no channel {name!r}")
            channel_ids.append(channel["id"])
        repo.insert_rule(uow.session, rule_to_values(rule, project_id, _now()), channel_ids)


def add_rule(uow: UnitOfWork, project: str, spec: RuleSpec) -> Rule:
    rule = build_rule(project, spec)
    with uow:
        _insert_rules(uow, project, [rule])
        uow.commit()
    return rule


def install_default_rules(
    uow: UnitOfWork, project: str, channels: Sequence[str] = ()
) -> list[Rule]:
    """The ready-made rules (``auditor.alerting.default_rules``); existing ones are kept."""
    with uow:
        _project_id(uow, project)
        wanted = default_rules(project, tuple(channels))
        missing = [r for r in wanted if repo.find_rule(uow.session, r.id) is None]
        _insert_rules(uow, project, missing)
        uow.commit()
    return missing


def list_rules(uow: UnitOfWork, project: str) -> list[Rule]:
    with uow:
        rows = repo.list_rules(uow.session, _project_id(uow, project))
    return [rule_from_row(r, project) for r in rows]


def _own_rule(uow: UnitOfWork, project: str, rule_id: str) -> str:
    """Accept a full id or the name after '<project>:'."""
    project_id = _project_id(uow, project)
    for candidate in (rule_id, f"{project}:{rule_id}"):
        row = repo.find_rule(uow.session, candidate)
        if row is not None and row["project_id"] == project_id:
            return candidate
    raise NotFound(f"project {project!r} has no rule {rule_id!r}")


def remove_rule(uow: UnitOfWork, project: str, rule_id: str) -> str:
    """Delete a rule and its states (the log and the outbox are kept as history)."""
    with uow:
        full = _own_rule(uow, project, rule_id)
        repo.delete_rule(uow.session, full)
        uow.commit()
    return full


def set_rule_enabled(uow: UnitOfWork, project: str, rule_id: str, enabled: bool) -> str:
    with uow:
        full = _own_rule(uow, project, rule_id)
        repo.set_rule_enabled(uow.session, full, enabled)
        uow.commit()
    return full


# --- silences -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SilenceView:
    id: int
    rule_id: str | None
    subject: str | None
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str


def _silence_view(row: dict[str, Any]) -> SilenceView:
    subject = None
    if row["subject_kind"] is not None:
        subject = Subject(SubjectKind(row["subject_kind"]), row["subject_ref"] or "").key
    return SilenceView(
        row["id"],
        row["rule_id"],
        subject,
        row["starts_at"],
        row["ends_at"],
        row["reason"],
        row["created_by"],
    )


def add_silence(
    uow: UnitOfWork,
    project: str,
    *,
    ends_at: datetime,
    rule_id: str | None = None,
    subject: str | None = None,
    starts_at: datetime | None = None,
    reason: str = "",
    created_by: str = "",
) -> SilenceView:
    """Mute notices of a rule, a subject, or both, until ``ends_at`` (state keeps moving)."""
    starts = starts_at or _now()
    for name, moment in (("starts_at", starts), ("ends_at", ends_at)):
        out_of_range = time_out_of_range(moment)
        if out_of_range is not None:  # e.g. --for 999999d: a silence every recompute reads
            raise Invalid(f"{name}: {out_of_range}")
    parsed = None
    if subject is not None:
        selector = parse_subject(subject)
        if selector.kind is SubjectKind.EVERY_RATER:
            raise Invalid("a silence names one subject: project, rater:ID or model:ID")
        parsed = Subject(selector.kind, selector.ref)
    with uow:
        project_id = _project_id(uow, project)
        full = None if rule_id is None else _own_rule(uow, project, rule_id)
        try:
            Silence("new", project, starts, ends_at, full, parsed, reason, created_by)
        except ValueError as error:
            raise Invalid(str(error)) from None
        values = {
            "project_id": project_id,
            "rule_id": full,
            "subject_kind": None if parsed is None else parsed.kind.value,
            "subject_ref": None if parsed is None else parsed.ref,
            "starts_at": starts,
            "ends_at": ends_at,
            "reason": reason,
            "created_by": created_by,
            "created_at": _now(),
        }
        silence_id = repo.insert_silence(uow.session, values)
        uow.commit()
    return _silence_view({**values, "id": silence_id})


def list_silences(uow: UnitOfWork, project: str, *, include_ended: bool = False) -> list:
    with uow:
        project_id = _project_id(uow, project)
        rows = repo.list_silences(
            uow.session, project_id, active_at=None if include_ended else _now()
        )
    return [_silence_view(r) for r in rows]


def end_silence(uow: UnitOfWork, project: str, silence_id: int) -> None:
    with uow:
        if not repo.end_silence(uow.session, _project_id(uow, project), silence_id, _now()):
            raise NotFound(f"project {project!r} has no active silence {silence_id}")
        uow.commit()


# --- states and history ---------------------------------------------------------------------


@dataclass(frozen=True)
class StateView:
    rule_id: str
    subject: str
    status: str
    since: datetime | None
    evaluated_at: datetime | None
    episode_start: datetime | None
    value: float | None
    reason: str | None
    snapshot_id: int | None


def alert_status(uow: UnitOfWork, project: str) -> list[StateView]:
    """One row per (rule, subject): the current state and the value it was last judged on."""
    with uow:
        rows = repo.list_states(uow.session, _project_id(uow, project))
    return [
        StateView(
            r["rule_id"],
            r["subject_key"],
            r["status"],
            r["status_since"],
            r["evaluated_at"],
            r["episode_start"],
            r["last_value"],
            r["last_reason"],
            r["last_snapshot_id"],
        )
        for r in rows
    ]


def evaluation_history(
    uow: UnitOfWork, project: str, *, rule_id: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """The evaluation log, newest first: verdict, judged value, transition, notices."""
    with uow:
        project_id = _project_id(uow, project)
        full = None if rule_id is None else _own_rule(uow, project, rule_id)
        return repo.list_evaluations(uow.session, project_id, rule_id=full, limit=limit)


def notification_history(
    uow: UnitOfWork, project: str, *, status: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Outbox rows, newest first (without bodies' secrets: bodies carry none)."""
    with uow:
        return repo.list_outbox(uow.session, _project_id(uow, project), status=status, limit=limit)
