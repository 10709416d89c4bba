"""Shared builders for the alerting tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.alerting import (
    AlertState,
    Condition,
    ConditionKind,
    Judgement,
    Rule,
    Subject,
    SubjectKind,
    SubjectSelector,
    Verdict,
    retired,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
RATER = Subject(SubjectKind.RATER, "ann")


def make(**changes: object) -> Rule:
    """A valid project rule with ``changes`` applied."""
    fields: dict[str, object] = {
        "id": "r",
        "project": "p",
        "metric": "kappa_s",
        "subject": SubjectSelector(SubjectKind.PROJECT),
        "condition": Condition(ConditionKind.BELOW, threshold=0.6),
    }
    fields.update(changes)
    return Rule(**fields)  # type: ignore[arg-type]


def rule(
    for_minutes: float = 0,
    keep_minutes: float = 0,
    repeat_minutes: float | None = 60,
    rule_id: str = "r1",
) -> Rule:
    return Rule(
        id=rule_id,
        project="p1",
        metric="self_agreement",
        subject=SubjectSelector(SubjectKind.EVERY_RATER),
        condition=Condition(ConditionKind.BELOW, threshold=0.667),
        for_=timedelta(minutes=for_minutes),
        keep_firing_for=timedelta(minutes=keep_minutes),
        repeat_interval=None if repeat_minutes is None else timedelta(minutes=repeat_minutes),
    )


def initial(the_rule: Rule, subject: Subject = RATER) -> AlertState:
    return AlertState(rule_id=the_rule.id, subject=subject)


def judgement(verdict: Verdict) -> Judgement:
    if verdict is Verdict.RETIRED:
        return retired("rater removed")
    value = {Verdict.BREACH: 0.5, Verdict.CLEAR: 0.8, Verdict.INSUFFICIENT: None}[verdict]
    return Judgement(verdict, value, 0.667, f"test {verdict.value}")


def minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)
