"""What a project's alerts say now and what happened to them: current states, the
evaluation log (filtered to what a person asks: "when did it fire, for whom, since when?")
and the notices in the outbox. By default the history lists only transitions: a status
change or a repeat notice, not the thousands of evaluations that confirmed "ok" again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from auditor.errors import Invalid
from auditor.services.alerts.common import own_rule, project_id
from auditor.storage.alert_records import EvaluationFilter, EvaluationRecord, OutboxRecord
from auditor.storage.unit_of_work import UnitOfWork

STATUSES = ("ok", "pending", "firing", "insufficient_data")
# What --state / ?state= accepts: a status moved to, or one of the two notice events.
STATES = (*STATUSES, "resolved", "repeat")


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
        records = uow.alerts.list_states(project_id(uow, project))
    return [
        StateView(
            r.rule_id,
            r.subject_key,
            r.status,
            r.status_since,
            r.evaluated_at,
            r.episode_start,
            r.last_value,
            r.last_reason,
            r.last_snapshot_id,
        )
        for r in records
    ]


def notification_history(
    uow: UnitOfWork, project: str, *, status: str | None = None, limit: int = 100
) -> list[OutboxRecord]:
    """Outbox rows, newest first, with their channel's name (bodies carry no secrets)."""
    with uow:
        return uow.alert_log.list_outbox(project_id(uow, project), status=status, limit=limit)


@dataclass(frozen=True)
class HistoryFilter:
    rule: str | None = None  # a full rule id or the name after "<project>:"
    subject: str | None = None  # "project", "rater:ID", "model:ID"
    since: datetime | None = None
    state: str | None = None  # one of STATES
    every_evaluation: bool = False  # False: transitions only
    limit: int = 100


def change_of(row: EvaluationRecord) -> str:
    """What an evaluation did: ``resolved``, ``repeat``, the status moved to, or ``""``
    when it only confirmed the state it found."""
    before, after = row.from_status, row.to_status
    if before != after:
        return "resolved" if (before, after) == ("firing", "ok") else after
    if after == "firing" and (row.event_ids or row.suppressed_event_ids):
        return "repeat"
    return ""


@dataclass(frozen=True)
class HistoryRow:
    evaluation: EvaluationRecord
    change: str  # see ``change_of``


@dataclass(frozen=True)
class HistoryPage:
    rows: list[HistoryRow]  # newest first
    more: int  # matching rows beyond ``limit`` (0: the list is complete)


def alert_history(uow: UnitOfWork, project: str, where: HistoryFilter) -> HistoryPage:
    """Evaluations of ``project`` matching ``where``, newest first, each with its change,
    and how many more match beyond the limit (so a reader is told the list was cut)."""
    if where.state is not None and where.state not in STATES:
        raise Invalid(
            f"state must be one of {', '.join(STATES)}, got {where.state!r}", field="state"
        )
    with uow:
        owner = project_id(uow, project)
        rule_id = None if where.rule is None else own_rule(uow, project, where.rule)
        filters = EvaluationFilter(
            rule_id=rule_id,
            subject_key=where.subject,
            since=where.since,
            state=where.state,
            transitions_only=not where.every_evaluation,
        )
        rows = uow.alert_log.find_evaluations(owner, filters, limit=where.limit)
        # Count only when the page is full: a short page is the whole answer.
        more = 0
        if len(rows) == where.limit:
            more = uow.alert_log.count_evaluations(owner, filters) - len(rows)
    return HistoryPage([HistoryRow(row, change_of(row)) for row in rows], more)
