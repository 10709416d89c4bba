"""What happened to a project's alerts: the evaluation log filtered to what a person asks
("when did it fire, for whom, since when?"). By default only transitions: a status change
or a repeat notice, not the thousands of evaluations that confirmed "ok" again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.services import Invalid
from auditor.services.alert_admin import _own_rule, _project_id
from auditor.storage import alert_repository as repo
from auditor.storage.unit_of_work import UnitOfWork

STATUSES = ("ok", "pending", "firing", "insufficient_data")
# What --state / ?state= accepts: a status moved to, or one of the two notice events.
STATES = (*STATUSES, "resolved", "repeat")


@dataclass(frozen=True)
class HistoryFilter:
    rule: str | None = None  # a full rule id or the name after "<project>:"
    subject: str | None = None  # "project", "rater:ID", "model:ID"
    since: datetime | None = None
    state: str | None = None  # one of STATES
    every_evaluation: bool = False  # False: transitions only
    limit: int = 100


def change_of(row: dict[str, Any]) -> str:
    """What an evaluation did: ``resolved``, ``repeat``, the status moved to, or ``""``
    when it only confirmed the state it found."""
    before, after = row["from_status"], row["to_status"]
    if before != after:
        return "resolved" if (before, after) == ("firing", "ok") else after
    if after == "firing" and (row["event_ids"] or row["suppressed_event_ids"]):
        return "repeat"
    return ""


@dataclass(frozen=True)
class HistoryPage:
    rows: list[dict[str, Any]]  # newest first, each with ``change``
    more: int  # matching rows beyond ``limit`` (0: the list is complete)


def alert_history(uow: UnitOfWork, project: str, where: HistoryFilter) -> HistoryPage:
    """Evaluations of ``project`` matching ``where``, newest first, each with ``change``,
    and how many more match beyond the limit (so a reader is told the list was cut)."""
    if where.state is not None and where.state not in STATES:
        raise Invalid(f"state must be one of {', '.join(STATES)}, got {where.state!r}")
    with uow:
        project_id = _project_id(uow, project)
        rule_id = None if where.rule is None else _own_rule(uow, project, where.rule)
        match = {
            "rule_id": rule_id,
            "subject_key": where.subject,
            "since": where.since,
            "state": where.state,
            "transitions_only": not where.every_evaluation,
        }
        rows = repo.find_evaluations(uow.session, project_id, **match, limit=where.limit)
        # Count only when the page is full: a short page is the whole answer.
        more = 0
        if len(rows) == where.limit:
            more = repo.count_evaluations(uow.session, project_id, **match) - len(rows)
    return HistoryPage([{**row, "change": change_of(row)} for row in rows], more)
