"""The evaluation log and the outbox, as typed records (``uow.alert_log``).

Nothing here commits, except ``claim_due``, which is its own transaction on purpose: the claim
commits before any network I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import String, Table, and_, cast, func, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from auditor.storage.alert_models import AlertChannel, AlertEvaluation, AlertOutbox
from auditor.storage.alert_records import EvaluationFilter, EvaluationRecord, OutboxRecord
from auditor.storage.alert_repository import changed, records, upsert, values_of

_channels: Table = AlertChannel.__table__  # type: ignore[assignment]
_evaluations: Table = AlertEvaluation.__table__  # type: ignore[assignment]
_outbox: Table = AlertOutbox.__table__  # type: ignore[assignment]


def _where(project_id: int, filter_: EvaluationFilter) -> list[Any]:
    """The WHERE clauses of ``find_evaluations`` and ``count_evaluations``."""
    rule_id, subject_key, since = filter_.rule_id, filter_.subject_key, filter_.since
    state, transitions_only = filter_.state, filter_.transitions_only
    e = _evaluations.c
    # JSON arrays compare as text: '[]' on SQLite (JSON text) and PostgreSQL (jsonb::text).
    noticed = or_(cast(e.event_ids, String) != "[]", cast(e.suppressed_event_ids, String) != "[]")
    repeat = and_(e.from_status == "firing", e.to_status == "firing", noticed)
    moved = e.from_status != e.to_status
    where: list[Any] = [e.project_id == project_id]
    if transitions_only:
        where.append(or_(moved, repeat))
    if state == "resolved":
        where += [e.from_status == "firing", e.to_status == "ok"]
    elif state == "repeat":
        where.append(repeat)
    elif state is not None:
        where.append(e.to_status == state)
        if transitions_only:
            where.append(moved)
    if rule_id is not None:
        where.append(e.rule_id == rule_id)
    if subject_key is not None:
        where.append(e.subject_key == subject_key)
    if since is not None:
        where.append(e.evaluated_at >= since)
    return where


class AlertLog:
    def __init__(self, session: Session) -> None:
        self.db = session

    # --- evaluation log -----------------------------------------------------------------------

    def evaluated_keys(self, snapshot_ids: Iterable[int]) -> set[tuple[str, str, int]]:
        e = _evaluations.c
        query = select(e.rule_id, e.subject_key, e.snapshot_id).where(
            e.snapshot_id.in_(sorted(set(snapshot_ids)))
        )
        return {(r[0], r[1], int(r[2])) for r in self.db.execute(query)}

    def insert_evaluation(self, evaluation: EvaluationRecord) -> bool:
        """Insert one log row; False (nothing written) when (rule, subject, snapshot) exists."""
        statement = (
            upsert(self.db)(_evaluations)
            .values(**values_of(evaluation))
            .on_conflict_do_nothing(index_elements=["rule_id", "subject_key", "snapshot_id"])
            .returning(_evaluations.c.id)
        )
        return self.db.execute(statement).scalar() is not None

    def find_evaluations(
        self, project_id: int, where: EvaluationFilter | None = None, *, limit: int = 100
    ) -> list[EvaluationRecord]:
        """The evaluation log, newest first, filtered in SQL (so ``limit`` counts matches)."""
        e = _evaluations.c
        query = select(_evaluations).where(*_where(project_id, where or EvaluationFilter()))
        query = query.order_by(e.evaluated_at.desc(), e.id.desc()).limit(limit)
        return records(EvaluationRecord, self.db.execute(query))

    def count_evaluations(self, project_id: int, where: EvaluationFilter | None = None) -> int:
        """How many rows ``find_evaluations`` would list without a limit."""
        clauses = _where(project_id, where or EvaluationFilter())
        query = select(func.count()).select_from(_evaluations).where(*clauses)
        return int(self.db.execute(query).scalar_one())

    # --- outbox -------------------------------------------------------------------------------

    def insert_outbox(self, notices: Sequence[OutboxRecord]) -> int:
        """Insert notices; one whose (event_id, channel_id) exists is skipped. Returns inserted."""
        inserted = 0
        for notice in notices:
            statement = (
                upsert(self.db)(_outbox)
                .values(**values_of(notice, without=("channel",)))
                .on_conflict_do_nothing(index_elements=["event_id", "channel_id"])
                .returning(_outbox.c.id)
            )
            inserted += self.db.execute(statement).scalar() is not None
        return inserted

    def mark_sent(
        self, outbox_id: int, now: datetime, reason: str, status_code: int | None
    ) -> bool:
        """The send succeeded: sent, whoever holds the claim now (it *was* delivered)."""
        o = _outbox.c
        statement = (
            update(_outbox)
            .where(o.id == outbox_id, o.status == "pending")
            .values(
                status="sent",
                sent_at=now,
                attempts=o.attempts + 1,
                claimed_until=None,
                claimed_by=None,
                last_error=None if not reason else reason[:2000],
                last_status_code=status_code,
            )
        )
        return changed(self.db.execute(statement))

    def mark_failed(
        self,
        outbox_id: int,
        worker: str,
        *,
        attempts: int,
        next_attempt_at: datetime | None,
        error: str,
        status_code: int | None,
    ) -> bool:
        """A failed attempt by ``worker``: retry at ``next_attempt_at``, or dead when None.

        Only the claim's holder may record a failure, so a sender whose lease expired cannot
        overwrite the outcome of the sender that took the row over.
        """
        o = _outbox.c
        values: dict[str, Any] = {
            "attempts": attempts,
            "claimed_until": None,
            "claimed_by": None,
            "last_error": error[:2000],
            "last_status_code": status_code,
        }
        if next_attempt_at is None:
            values["status"] = "dead"
        else:
            values["next_attempt_at"] = next_attempt_at
        statement = (
            update(_outbox)
            .where(o.id == outbox_id, o.status == "pending", o.claimed_by == worker)
            .values(**values)
        )
        return changed(self.db.execute(statement))

    def list_outbox(
        self, project_id: int | None = None, *, status: str | None = None, limit: int = 100
    ) -> list[OutboxRecord]:
        o = _outbox.c
        query = select(_outbox, _channels.c.name.label("channel")).join(
            _channels, _channels.c.id == o.channel_id
        )
        if project_id is not None:
            query = query.where(o.project_id == project_id)
        if status is not None:
            query = query.where(o.status == status)
        query = query.order_by(o.created_at.desc(), o.id.desc()).limit(limit)
        return records(OutboxRecord, self.db.execute(query))

    def outbox_counts(self, project_id: int) -> dict[str, int]:
        o = _outbox.c
        query = select(o.status, func.count()).where(o.project_id == project_id)
        return {row[0]: int(row[1]) for row in self.db.execute(query.group_by(o.status))}


def claim_due(
    engine: Engine, now: datetime, lease_until: datetime, worker: str, limit: int
) -> list[OutboxRecord]:
    """Claim up to ``limit`` due rows for ``worker`` until ``lease_until`` and COMMIT.

    Due: pending, ``next_attempt_at <= now``, and unclaimed or with an expired lease (a
    sender that died between sending and marking). PostgreSQL skips rows another sender is
    claiming right now (FOR UPDATE SKIP LOCKED); SQLite serialises writers (BEGIN IMMEDIATE).
    The claim commits before any network I/O: no transaction is held across a send.
    """
    o = _outbox.c
    due = (
        select(o.id)
        .where(
            o.status == "pending",
            o.next_attempt_at <= now,
            or_(o.claimed_until.is_(None), o.claimed_until < now),
        )
        .order_by(o.next_attempt_at, o.id)
        .limit(limit)
    )
    if engine.dialect.name == "postgresql":
        due = due.with_for_update(skip_locked=True)
    statement = (
        update(_outbox)
        .where(o.id.in_(due.scalar_subquery()))
        .values(claimed_until=lease_until, claimed_by=worker)
        .returning(_outbox)
    )
    connection = engine.connect().execution_options(sqlite_begin="IMMEDIATE")
    try:
        with connection.begin():
            rows = records(OutboxRecord, connection.execute(statement))
    finally:
        connection.close()
    return sorted(rows, key=lambda r: (r.next_attempt_at, r.id or 0))
