"""Reads and writes of the alert tables: channels, rules, states, the log, the outbox, silences.

Functions take the caller's ``Session`` or ``Connection`` (the unit of work owns the
transaction; nothing here commits, except ``claim_due`` which is its own transaction on
purpose) and return plain dicts of column values, so the layers above never see SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import String, Table, and_, cast, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from auditor.storage.alert_models import (
    AlertChannel,
    AlertEvaluation,
    AlertOutbox,
    AlertRule,
    AlertRuleChannel,
    AlertSilence,
    AlertStateRow,
)
from auditor.storage.models import Project, Rater
from auditor.storage.snapshot_models import MetricPoint, Snapshot

Executor = Session | Connection

_channels: Table = AlertChannel.__table__  # type: ignore[assignment]
_rules: Table = AlertRule.__table__  # type: ignore[assignment]
_rule_channels: Table = AlertRuleChannel.__table__  # type: ignore[assignment]
_states: Table = AlertStateRow.__table__  # type: ignore[assignment]
_evaluations: Table = AlertEvaluation.__table__  # type: ignore[assignment]
_outbox: Table = AlertOutbox.__table__  # type: ignore[assignment]
_silences: Table = AlertSilence.__table__  # type: ignore[assignment]


def _dialect(db: Executor) -> str:
    return db.get_bind().dialect.name if isinstance(db, Session) else db.dialect.name


def _insert(db: Executor) -> Any:
    return postgresql.insert if _dialect(db) == "postgresql" else sqlite.insert


def _dicts(result: Any) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in result]


# --- projects, snapshots, points ------------------------------------------------------------


def project_slug(db: Executor, project_id: int) -> str | None:
    return db.execute(select(Project.slug).where(Project.id == project_id)).scalar()


def project_id_of(db: Executor, slug: str) -> int | None:
    return db.execute(select(Project.id).where(Project.slug == slug)).scalar()


def snapshots_by_id(db: Executor, ids: Sequence[int]) -> list[dict[str, Any]]:
    """id, project_id, scope, tick, as_of of the given snapshots, oldest first."""
    s = Snapshot
    query = select(s.id, s.project_id, s.scope, s.tick, s.as_of).where(s.id.in_(list(ids)))
    return _dicts(db.execute(query.order_by(s.as_of, s.id)))


def points_of_snapshot(db: Executor, snapshot_id: int, metrics: Iterable[str]) -> list[dict]:
    p = MetricPoint
    query = select(
        p.metric, p.subject_kind, p.subject_id, p.value, p.ci_low, p.ci_high, p.n, p.reason
    ).where(p.snapshot_id == snapshot_id, p.metric.in_(sorted(set(metrics))))
    return _dicts(db.execute(query))


def point_before(
    db: Executor,
    project_id: int,
    scope: str,
    metric: str,
    subject_kind: str,
    subject_id: str,
    at: datetime,
) -> dict[str, Any] | None:
    """The point of (metric, subject) in the latest snapshot of ``scope`` with as_of <= ``at``.

    None when there is no such snapshot, or that snapshot has no point for the subject: a
    lookback compares with the view as it was then, not with an older one.
    """
    latest = db.execute(
        select(Snapshot.id)
        .where(Snapshot.project_id == project_id, Snapshot.scope == scope, Snapshot.as_of <= at)
        .order_by(Snapshot.as_of.desc(), Snapshot.tick.desc())
        .limit(1)
    ).scalar()
    if latest is None:
        return None
    p = MetricPoint
    row = db.execute(
        select(p.value, p.ci_low, p.ci_high, p.n, p.reason, p.as_of).where(
            p.snapshot_id == latest,
            p.metric == metric,
            p.subject_kind == subject_kind,
            p.subject_id == subject_id,
        )
    ).first()
    return None if row is None else dict(row._mapping)


def rater_ids(db: Executor, project_id: int) -> set[str]:
    """External ids of the project's raters (humans and models)."""
    rows = db.execute(select(Rater.external_id).where(Rater.project_id == project_id))
    return {row[0] for row in rows}


# --- channels -------------------------------------------------------------------------------


def insert_channel(db: Executor, values: Mapping[str, Any]) -> int:
    return int(db.execute(_channels.insert().values(**values).returning(_channels.c.id)).scalar())


def find_channel(db: Executor, project_id: int, name: str) -> dict[str, Any] | None:
    query = select(_channels).where(_channels.c.project_id == project_id, _channels.c.name == name)
    row = db.execute(query).first()
    return None if row is None else dict(row._mapping)


def list_channels(db: Executor, project_id: int) -> list[dict[str, Any]]:
    query = select(_channels).where(_channels.c.project_id == project_id)
    return _dicts(db.execute(query.order_by(_channels.c.name)))


def channels_by_id(db: Executor, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    rows = _dicts(db.execute(select(_channels).where(_channels.c.id.in_(sorted(set(ids))))))
    return {row["id"]: row for row in rows}


def rules_using_channel(db: Executor, channel_id: int) -> list[str]:
    query = select(_rule_channels.c.rule_id).where(_rule_channels.c.channel_id == channel_id)
    return sorted(row[0] for row in db.execute(query))


def delete_channel(db: Executor, channel_id: int) -> None:
    db.execute(delete(_channels).where(_channels.c.id == channel_id))


# --- rules ----------------------------------------------------------------------------------


def insert_rule(db: Executor, values: Mapping[str, Any], channel_ids: Sequence[int]) -> None:
    db.execute(_rules.insert().values(**values))
    if channel_ids:
        db.execute(
            _rule_channels.insert(),
            [{"rule_id": values["id"], "channel_id": cid} for cid in channel_ids],
        )


def _with_channels(db: Executor, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each rule dict gains ``channels``: the names of its channels, sorted."""
    if not rules:
        return rules
    query = (
        select(_rule_channels.c.rule_id, _channels.c.name)
        .join(_channels, _channels.c.id == _rule_channels.c.channel_id)
        .where(_rule_channels.c.rule_id.in_([r["id"] for r in rules]))
    )
    names: dict[str, list[str]] = {}
    for rule_id, name in db.execute(query):
        names.setdefault(rule_id, []).append(name)
    for rule in rules:
        rule["channels"] = sorted(names.get(rule["id"], []))
    return rules


def find_rule(db: Executor, rule_id: str) -> dict[str, Any] | None:
    row = db.execute(select(_rules).where(_rules.c.id == rule_id)).first()
    return None if row is None else _with_channels(db, [dict(row._mapping)])[0]


def list_rules(db: Executor, project_id: int, *, enabled_only: bool = False) -> list[dict]:
    query = select(_rules).where(_rules.c.project_id == project_id)
    if enabled_only:
        query = query.where(_rules.c.enabled.is_(True))
    return _with_channels(db, _dicts(db.execute(query.order_by(_rules.c.id))))


def rule_channel_ids(db: Executor, rule_ids: Iterable[str]) -> dict[str, list[int]]:
    query = select(_rule_channels.c.rule_id, _rule_channels.c.channel_id).where(
        _rule_channels.c.rule_id.in_(sorted(set(rule_ids)))
    )
    found: dict[str, list[int]] = {}
    for rule_id, channel_id in db.execute(query):
        found.setdefault(rule_id, []).append(channel_id)
    return found


def delete_rule(db: Executor, rule_id: str) -> bool:
    return bool(db.execute(delete(_rules).where(_rules.c.id == rule_id)).rowcount)


def set_rule_enabled(db: Executor, rule_id: str, enabled: bool) -> bool:
    statement = update(_rules).where(_rules.c.id == rule_id).values(enabled=enabled)
    return bool(db.execute(statement).rowcount)


# --- states ---------------------------------------------------------------------------------


def states_of_rules(
    db: Executor, rule_ids: Iterable[str], *, for_update: bool = False
) -> dict[tuple[str, str], dict[str, Any]]:
    """{(rule_id, subject_key): state row}; rows locked (FOR UPDATE) on PostgreSQL if asked."""
    query = select(_states).where(_states.c.rule_id.in_(sorted(set(rule_ids))))
    if for_update:
        query = query.with_for_update()  # SQLite: the write transaction is the lock
    return {(r["rule_id"], r["subject_key"]): r for r in _dicts(db.execute(query))}


def upsert_state(db: Executor, values: Mapping[str, Any]) -> None:
    statement = _insert(db)(_states).values(**values)
    keys = ("rule_id", "subject_key")
    changes = {k: statement.excluded[k] for k in values if k not in keys}
    db.execute(statement.on_conflict_do_update(index_elements=list(keys), set_=changes))


def list_states(db: Executor, project_id: int) -> list[dict[str, Any]]:
    query = select(_states).where(_states.c.project_id == project_id)
    return _dicts(db.execute(query.order_by(_states.c.rule_id, _states.c.subject_key)))


# --- evaluation log -------------------------------------------------------------------------


def evaluated_keys(db: Executor, snapshot_ids: Iterable[int]) -> set[tuple[str, str, int]]:
    e = _evaluations.c
    query = select(e.rule_id, e.subject_key, e.snapshot_id).where(
        e.snapshot_id.in_(sorted(set(snapshot_ids)))
    )
    return {(r[0], r[1], int(r[2])) for r in db.execute(query)}


def insert_evaluation(db: Executor, values: Mapping[str, Any]) -> bool:
    """Insert one log row; False (nothing written) when (rule, subject, snapshot) exists."""
    statement = (
        _insert(db)(_evaluations)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["rule_id", "subject_key", "snapshot_id"])
        .returning(_evaluations.c.id)
    )
    return db.execute(statement).scalar() is not None


def list_evaluations(
    db: Executor, project_id: int, *, rule_id: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    e = _evaluations.c
    query = select(_evaluations).where(e.project_id == project_id)
    if rule_id is not None:
        query = query.where(e.rule_id == rule_id)
    query = query.order_by(e.evaluated_at.desc(), e.id.desc()).limit(limit)
    return _dicts(db.execute(query))


def _evaluation_filter(
    project_id: int,
    *,
    rule_id: str | None,
    subject_key: str | None,
    since: datetime | None,
    state: str | None,
    transitions_only: bool,
) -> list[Any]:
    """The WHERE clauses of ``find_evaluations`` (shared with ``count_evaluations``)."""
    e = _evaluations.c
    # JSON arrays compare as text: '[]' on SQLite (JSON text) and PostgreSQL (jsonb::text).
    noticed = or_(cast(e.event_ids, String) != "[]", cast(e.suppressed_event_ids, String) != "[]")
    repeat = and_(e.from_status == "firing", e.to_status == "firing", noticed)
    changed = e.from_status != e.to_status
    where: list[Any] = [e.project_id == project_id]
    if transitions_only:
        where.append(or_(changed, repeat))
    if state == "resolved":
        where += [e.from_status == "firing", e.to_status == "ok"]
    elif state == "repeat":
        where.append(repeat)
    elif state is not None:
        where.append(e.to_status == state)
        if transitions_only:
            where.append(changed)
    if rule_id is not None:
        where.append(e.rule_id == rule_id)
    if subject_key is not None:
        where.append(e.subject_key == subject_key)
    if since is not None:
        where.append(e.evaluated_at >= since)
    return where


def find_evaluations(
    db: Executor,
    project_id: int,
    *,
    rule_id: str | None = None,
    subject_key: str | None = None,
    since: datetime | None = None,
    state: str | None = None,
    transitions_only: bool = True,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """The evaluation log, newest first, filtered in SQL (so ``limit`` counts matches).

    A transition is a row whose status changed, or a repeat (firing stays firing and a
    notice was written or held back by a silence). ``state`` is a status (the row moved to
    it; with ``transitions_only`` False, any row in it), ``resolved`` (firing -> ok) or
    ``repeat``."""
    e = _evaluations.c
    where = _evaluation_filter(
        project_id,
        rule_id=rule_id,
        subject_key=subject_key,
        since=since,
        state=state,
        transitions_only=transitions_only,
    )
    query = select(_evaluations).where(*where)
    query = query.order_by(e.evaluated_at.desc(), e.id.desc()).limit(limit)
    return _dicts(db.execute(query))


def count_evaluations(
    db: Executor,
    project_id: int,
    *,
    rule_id: str | None = None,
    subject_key: str | None = None,
    since: datetime | None = None,
    state: str | None = None,
    transitions_only: bool = True,
) -> int:
    """How many rows ``find_evaluations`` would list without a limit."""
    where = _evaluation_filter(
        project_id,
        rule_id=rule_id,
        subject_key=subject_key,
        since=since,
        state=state,
        transitions_only=transitions_only,
    )
    query = select(func.count()).select_from(_evaluations).where(*where)
    return int(db.execute(query).scalar_one())


# --- outbox ---------------------------------------------------------------------------------


def insert_outbox(db: Executor, rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert notices; a row whose (event_id, channel_id) exists is skipped. Returns inserted."""
    inserted = 0
    for row in rows:
        statement = (
            _insert(db)(_outbox)
            .values(**row)
            .on_conflict_do_nothing(index_elements=["event_id", "channel_id"])
            .returning(_outbox.c.id)
        )
        inserted += db.execute(statement).scalar() is not None
    return inserted


def claim_due(
    engine: Engine, now: datetime, lease_until: datetime, worker: str, limit: int
) -> list[dict[str, Any]]:
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
            rows = _dicts(connection.execute(statement))
    finally:
        connection.close()
    return sorted(rows, key=lambda r: (r["next_attempt_at"], r["id"]))


def mark_sent(
    db: Executor, outbox_id: int, now: datetime, reason: str, status_code: int | None
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
    return bool(db.execute(statement).rowcount)


def mark_failed(
    db: Executor,
    outbox_id: int,
    worker: str,
    *,
    attempts: int,
    next_attempt_at: datetime | None,
    error: str,
    status_code: int | None,
) -> bool:
    """A failed attempt by ``worker``: retry at ``next_attempt_at``, or dead when it is None.

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
    return bool(db.execute(statement).rowcount)


def list_outbox(
    db: Executor,
    project_id: int | None = None,
    *,
    status: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    o = _outbox.c
    query = select(_outbox, _channels.c.name.label("channel")).join(
        _channels, _channels.c.id == o.channel_id
    )
    if project_id is not None:
        query = query.where(o.project_id == project_id)
    if status is not None:
        query = query.where(o.status == status)
    return _dicts(db.execute(query.order_by(o.created_at.desc(), o.id.desc()).limit(limit)))


def outbox_counts(db: Executor, project_id: int) -> dict[str, int]:
    o = _outbox.c
    query = select(o.status, func.count()).where(o.project_id == project_id).group_by(o.status)
    return {row[0]: int(row[1]) for row in db.execute(query)}


# --- silences -------------------------------------------------------------------------------


def insert_silence(db: Executor, values: Mapping[str, Any]) -> int:
    return int(db.execute(_silences.insert().values(**values).returning(_silences.c.id)).scalar())


def silences_active(db: Executor, project_id: int, at: datetime) -> list[dict[str, Any]]:
    s = _silences.c
    query = select(_silences).where(
        and_(s.project_id == project_id, s.starts_at <= at, s.ends_at > at)
    )
    return _dicts(db.execute(query.order_by(s.id)))


def list_silences(
    db: Executor, project_id: int, *, active_at: datetime | None = None
) -> list[dict[str, Any]]:
    s = _silences.c
    query = select(_silences).where(s.project_id == project_id)
    if active_at is not None:
        query = query.where(s.ends_at > active_at)
    return _dicts(db.execute(query.order_by(s.ends_at, s.id)))


def end_silence(db: Executor, project_id: int, silence_id: int, at: datetime) -> bool:
    """End a silence at ``at``: an active one keeps its row (the record of what was muted),
    one that has not started yet is deleted. False when there is no such unended silence."""
    s = _silences.c
    mine = and_(s.id == silence_id, s.project_id == project_id, s.ends_at > at)
    if db.execute(delete(_silences).where(mine, s.starts_at >= at)).rowcount:
        return True
    return bool(db.execute(update(_silences).where(mine).values(ends_at=at)).rowcount)
