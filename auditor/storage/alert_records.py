"""The alert tables' rows as typed values: what the alert repositories return and take.

Plain frozen dataclasses, one field per column, so services never see a session, an ORM row
or a dict of column values. Turning them into ``auditor.alerting`` values is the services'
job (storage and alerting do not import each other).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class SnapshotRef:
    id: int
    project_id: int
    scope: str
    tick: int
    as_of: datetime


@dataclass(frozen=True)
class PointRecord:
    metric: str
    subject_kind: str
    subject_id: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None


@dataclass(frozen=True)
class ChannelRecord:
    """``config`` is the kind's JSON as stored (it may hold secrets: never show it as is)."""

    id: int | None
    project_id: int
    name: str
    kind: str
    config: dict[str, Any] = field(repr=False)
    timeout_seconds: float
    created_at: datetime


@dataclass(frozen=True)
class RuleRecord:
    id: str
    project_id: int
    metric: str
    subject_kind: str
    subject_ref: str
    scope: str
    condition_kind: str
    threshold: float | None
    drop_by: float | None
    lookback_seconds: int | None
    min_n: int
    for_seconds: int
    keep_firing_for_seconds: int
    severity: str
    repeat_interval_seconds: int | None
    enabled: bool
    created_at: datetime
    channels: tuple[str, ...] = ()  # channel names, sorted (not a column)
    margin: float | None = None
    z: float | None = None


@dataclass(frozen=True)
class StateRecord:
    rule_id: str
    subject_key: str
    project_id: int
    subject_kind: str
    subject_ref: str
    status: str
    evaluated_at: datetime | None
    status_since: datetime | None
    breach_since: datetime | None
    episode_start: datetime | None
    clear_since: datetime | None
    data_missing_since: datetime | None
    firing_notified: bool
    last_notified_at: datetime | None
    repeat_seq: int
    last_snapshot_id: int | None
    last_value: float | None
    last_reason: str | None


@dataclass(frozen=True)
class EvaluationRecord:
    """One row of the evaluation log; ``id`` is None until it is stored."""

    id: int | None
    project_id: int
    rule_id: str
    subject_key: str
    snapshot_id: int
    evaluated_at: datetime
    verdict: str
    judged_value: float | None
    limit_value: float | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    lookback_value: float | None
    reason: str
    from_status: str
    to_status: str
    silence_id: int | None
    event_ids: list[str]
    suppressed_event_ids: list[str]


@dataclass(frozen=True)
class EvaluationFilter:
    """Which rows of the evaluation log to read.

    A transition is a row whose status changed, or a repeat (firing stays firing and a notice
    was written or held back by a silence). ``state`` is a status (the row moved to it; with
    ``transitions_only`` False, any row in it), ``resolved`` (firing -> ok) or ``repeat``.
    """

    rule_id: str | None = None
    subject_key: str | None = None
    since: datetime | None = None
    state: str | None = None
    transitions_only: bool = False


@dataclass(frozen=True)
class OutboxRecord:
    """One notice for one channel; ``channel`` is the channel's name when read with it."""

    id: int | None
    event_id: str
    channel_id: int
    project_id: int
    rule_id: str
    subject_key: str
    kind: str
    sequence: int
    body: str
    status: str
    attempts: int
    next_attempt_at: datetime
    created_at: datetime
    claimed_until: datetime | None = None
    claimed_by: str | None = None
    last_error: str | None = None
    last_status_code: int | None = None
    sent_at: datetime | None = None
    channel: str | None = None


@dataclass(frozen=True)
class SilenceRecord:
    id: int | None
    project_id: int
    rule_id: str | None
    subject_kind: str | None
    subject_ref: str | None
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str
    created_at: datetime
