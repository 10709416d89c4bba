"""Stored alert records <-> the pure values of ``auditor.alerting``.

Storage and alerting do not know each other (siblings in the layers): the services translate.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from auditor.alerting import (
    AlertState,
    AlertStatus,
    Condition,
    ConditionKind,
    Rule,
    Severity,
    Silence,
    Subject,
    SubjectKind,
    SubjectSelector,
)
from auditor.storage.alert_records import RuleRecord, SilenceRecord, StateRecord


def _seconds(delta: timedelta | None) -> int | None:
    return None if delta is None else int(delta.total_seconds())


def _delta(seconds: int | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)


def rule_of(record: RuleRecord, project: str) -> Rule:
    """A stored rule as the pure ``Rule`` (re-validated by its ``__post_init__``)."""
    return Rule(
        id=record.id,
        project=project,
        metric=record.metric,
        subject=SubjectSelector(SubjectKind(record.subject_kind), record.subject_ref or ""),
        condition=Condition(
            ConditionKind(record.condition_kind),
            threshold=record.threshold,
            drop=record.drop_by,
            lookback=_delta(record.lookback_seconds),
            margin=record.margin,
            z=record.z,
        ),
        scope=record.scope,
        min_n=record.min_n,
        for_=timedelta(seconds=record.for_seconds),
        keep_firing_for=timedelta(seconds=record.keep_firing_for_seconds),
        severity=Severity(record.severity),
        channels=record.channels,
        repeat_interval=_delta(record.repeat_interval_seconds),
        enabled=bool(record.enabled),
    )


def rule_record(rule: Rule, project_id: int, created_at: datetime) -> RuleRecord:
    return RuleRecord(
        id=rule.id,
        project_id=project_id,
        metric=rule.metric,
        subject_kind=rule.subject.kind.value,
        subject_ref=rule.subject.ref,
        scope=rule.scope,
        condition_kind=rule.condition.kind.value,
        threshold=rule.condition.threshold,
        drop_by=rule.condition.drop,
        lookback_seconds=_seconds(rule.condition.lookback),
        margin=rule.condition.margin,
        z=rule.condition.z,
        min_n=rule.min_n,
        for_seconds=int(rule.for_.total_seconds()),
        keep_firing_for_seconds=int(rule.keep_firing_for.total_seconds()),
        severity=rule.severity.value,
        repeat_interval_seconds=_seconds(rule.repeat_interval),
        enabled=rule.enabled,
        created_at=created_at,
        channels=rule.channels,
    )


def state_of(record: StateRecord) -> AlertState:
    return AlertState(
        rule_id=record.rule_id,
        subject=Subject(SubjectKind(record.subject_kind), record.subject_ref),
        status=AlertStatus(record.status),
        firing_notified=bool(record.firing_notified),
        repeat_seq=int(record.repeat_seq),
        evaluated_at=record.evaluated_at,
        status_since=record.status_since,
        breach_since=record.breach_since,
        episode_start=record.episode_start,
        clear_since=record.clear_since,
        data_missing_since=record.data_missing_since,
        last_notified_at=record.last_notified_at,
    )


def state_record(
    state: AlertState,
    project_id: int,
    *,
    snapshot_id: int,
    value: float | None,
    reason: str,
) -> StateRecord:
    """The row of ``state``, with the snapshot, value and reason it was last judged on."""
    return StateRecord(
        rule_id=state.rule_id,
        subject_key=state.subject.key,
        project_id=project_id,
        subject_kind=state.subject.kind.value,
        subject_ref=state.subject.ref,
        status=state.status.value,
        evaluated_at=state.evaluated_at,
        status_since=state.status_since,
        breach_since=state.breach_since,
        episode_start=state.episode_start,
        clear_since=state.clear_since,
        data_missing_since=state.data_missing_since,
        firing_notified=state.firing_notified,
        last_notified_at=state.last_notified_at,
        repeat_seq=state.repeat_seq,
        last_snapshot_id=snapshot_id,
        last_value=value,
        last_reason=reason,
    )


def silence_subject(record: SilenceRecord) -> Subject | None:
    if record.subject_kind is None:
        return None
    return Subject(SubjectKind(record.subject_kind), record.subject_ref or "")


def silence_of(record: SilenceRecord, project: str) -> Silence:
    return Silence(
        id=str(record.id),
        project=project,
        starts_at=record.starts_at,
        ends_at=record.ends_at,
        rule_id=record.rule_id,
        subject=silence_subject(record),
        reason=record.reason or "",
        created_by=record.created_by or "",
    )
