"""Reads and writes of snapshots and metric points, the dirty-tracking facts, and the
one-recompute-per-project lock.

Functions take an open SQLAlchemy ``Session`` or ``Connection`` (the caller's unit of work
owns the transaction) and return plain values, so the layers above never see SQLAlchemy.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, func, null, or_, select, text, type_coerce
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from auditor.domain import to_micros
from auditor.errors import DatabaseBusy, DatabaseUnavailable, WriteConflict
from auditor.storage import history_rollups
from auditor.storage.history_buckets import BUCKETS, bucketed_history
from auditor.storage.models import Label
from auditor.storage.read_records import HistoryPointRow
from auditor.storage.snapshot_models import MetricPoint, Snapshot, SnapshotCount

Executor = Session | Connection
# A place in a history: (as_of, scope, snapshot id) of the last point a page ended on.
HistoryCursor = tuple[datetime, str, int]

try:  # ADBC raises its own DB-API errors when the server goes away during a load
    from adbc_driver_manager import OperationalError as AdbcOperationalError
except ImportError:  # pragma: no cover - the drivers are runtime dependencies
    AdbcOperationalError = OperationalError  # type: ignore[misc,assignment]

# Errors after which the same recompute may well succeed: the server restarted, a backend was
# terminated, a connection dropped (typed by the unit of work's doors, or raw from a driver).
# The service maps them to a retryable error.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    AdbcOperationalError,
    DatabaseBusy,
    DatabaseUnavailable,
    WriteConflict,
)


def is_transient(error: BaseException) -> bool:
    if isinstance(error, TRANSIENT_ERRORS):
        return True
    return isinstance(error, DBAPIError) and bool(error.connection_invalidated)


@dataclass(frozen=True)
class SnapshotHead:
    """The latest snapshot of one scope, as dirty tracking needs it."""

    id: int
    scope: str
    tick: int
    watermark: int
    project_label_count: int
    window_start: datetime | None
    window_end: datetime | None
    computed_at: datetime


def snapshot_columns() -> list[str]:
    """The snapshot's columns as its readers see them (``lean`` is a copy of part of
    ``result``, for the pages' reads only)."""
    return [c.name for c in Snapshot.__table__.columns if c.name != "lean"]


# Above this many pairs (those of 30 raters) a snapshot keeps its result without the pairs
# beside it (``Snapshot.lean``).
LEAN_PAIRS = 435


def lean_result(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """``result`` without its pairwise_cohen when that has more than LEAN_PAIRS pairs."""
    if len(result.get("pairwise_cohen") or ()) <= LEAN_PAIRS:
        return None
    return {k: v for k, v in result.items() if k != "pairwise_cohen"}


def _micros(moment: datetime | int) -> int:
    return moment if isinstance(moment, int) else to_micros(moment)


def _latest_at(project_id: int, scope: str, at: datetime | None) -> list[Any]:
    """Conditions for the snapshots of ``scope`` at its latest as_of at or before ``at``: the
    newest time by one index probe (``max``), then the newest tick among those few. One
    ``ORDER BY as_of DESC, tick DESC LIMIT 1`` was sorted whole by PostgreSQL when its row
    estimate was off: 148 ms at 100,000 snapshots."""
    s = Snapshot
    mine = [s.project_id == project_id, s.scope == scope]
    newest = select(func.max(s.as_of)).where(*mine)
    if at is not None:
        newest = newest.where(s.as_of <= at)
    return [*mine, s.as_of == newest.scalar_subquery()]


def _snapshot_dict(snapshot: Snapshot) -> dict[str, Any]:
    return {name: getattr(snapshot, name) for name in snapshot_columns()}


class _Lru:
    """A small thread-safe least-recently-used map (per process): values must be immutable."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._guard = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Any:
        with self._guard:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        with self._guard:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


# Reads of immutable snapshots' points kept per process: the weakest pairs of a 200-rater
# snapshot cost two reads over its 19,900 pair points (about 10 ms) on every page view.
_IMMUTABLE = _Lru(256)


# --- one recompute per project at a time ----------------------------------------------------

_LOCAL_LOCKS: dict[tuple[str, int], threading.Lock] = {}
_LOCAL_LOCKS_GUARD = threading.Lock()
# Namespace of the two-key advisory lock, so other users of advisory locks cannot collide.
_ADVISORY_NAMESPACE = 0x61756469  # "audi"


class ProjectLock:
    """The result of trying the project's recompute lock."""

    def __init__(self, acquired: bool, connection: Connection | None = None) -> None:
        self.acquired = acquired
        self._connection = connection

    def ensure_held(self) -> None:
        """Raise a transient error when the lock's database session died (terminated backend,
        server restart): the lock died with it, so the recompute must not go on to write."""
        if self._connection is not None:
            self._connection.execute(text("SELECT 1"))
            self._connection.commit()


@contextmanager
def project_lock(engine: Engine, project_id: int) -> Iterator[ProjectLock]:
    """Hold the project's recompute lock for the ``with`` block. ``acquired`` is False when
    another recompute holds it (the caller skips: the next scan finds the project dirty again).

    PostgreSQL: a session-level ``pg_try_advisory_lock`` on a dedicated connection, held for
    the whole recompute and released by the server when that connection ends, so a worker
    killed by SIGKILL cannot leave a stale lock. SQLite (embedded, one process): a lock local
    to the process, per database and project.
    """
    if engine.dialect.name != "postgresql":
        key = (str(engine.url), project_id)
        with _LOCAL_LOCKS_GUARD:
            lock = _LOCAL_LOCKS.setdefault(key, threading.Lock())
        acquired = lock.acquire(blocking=False)
        try:
            yield ProjectLock(acquired)
        finally:
            if acquired:
                lock.release()
        return

    arguments = {"namespace": _ADVISORY_NAMESPACE, "project": project_id}
    connection = engine.connect()
    try:
        acquired = bool(
            connection.execute(
                text("SELECT pg_try_advisory_lock(:namespace, :project)"), arguments
            ).scalar()
        )
        connection.commit()  # the lock is session-level: it outlives this transaction
        try:
            yield ProjectLock(acquired, connection if acquired else None)
        finally:
            if acquired:
                try:
                    connection.execute(
                        text("SELECT pg_advisory_unlock(:namespace, :project)"), arguments
                    )
                    connection.commit()
                except SQLAlchemyError:
                    # The connection is gone; so is the lock, which died with its session.
                    # Never let this mask the error that ended the recompute.
                    connection.invalidate()
    finally:
        connection.close()


class SnapshotRepository:
    """Snapshots, their metric points and the dirty-tracking facts, in the unit of work's
    session (``uow.snapshots``)."""

    def __init__(self, db: Executor) -> None:
        self.db = db

    def label_facts(self, project_id: int | None = None) -> dict[int, tuple[int, int]]:
        """{project_id: (max label id, label count)} for projects that have labels."""
        query = select(Label.project_id, func.max(Label.id), func.count()).group_by(
            Label.project_id
        )
        if project_id is not None:
            query = query.where(Label.project_id == project_id)
        return {row[0]: (int(row[1]), int(row[2])) for row in self.db.execute(query).all()}

    def latest_heads(self, project_id: int | None = None) -> dict[tuple[int, str], SnapshotHead]:
        """{(project_id, scope): latest snapshot by tick}."""
        newest = select(
            Snapshot.project_id, Snapshot.scope, func.max(Snapshot.tick).label("tick")
        ).group_by(Snapshot.project_id, Snapshot.scope)
        if project_id is not None:
            newest = newest.where(Snapshot.project_id == project_id)
        newest_sq = newest.subquery()
        rows = self.db.execute(
            select(Snapshot).join(
                newest_sq,
                and_(
                    Snapshot.project_id == newest_sq.c.project_id,
                    Snapshot.scope == newest_sq.c.scope,
                    Snapshot.tick == newest_sq.c.tick,
                ),
            )
        ).scalars()
        return {
            (s.project_id, s.scope): SnapshotHead(
                s.id,
                s.scope,
                s.tick,
                s.watermark,
                s.project_label_count,
                s.window_start,
                s.window_end,
                s.computed_at,
            )
            for s in rows
        }

    def labels_in_ranges(
        self, project_id: int, ranges: Sequence[tuple[datetime, datetime, bool, bool]]
    ) -> bool:
        """Whether any label of the project has labeled_at inside one of ``ranges``
        (low, high, low_inclusive, high_inclusive)."""
        if not ranges:
            return False
        conditions = []
        for low, high, low_inclusive, high_inclusive in ranges:
            above = Label.labeled_at >= low if low_inclusive else Label.labeled_at > low
            below = Label.labeled_at <= high if high_inclusive else Label.labeled_at < high
            conditions.append(and_(above, below))
        query = select(exists().where(Label.project_id == project_id, or_(*conditions)))
        return bool(self.db.execute(query).scalar())

    def insert_snapshot(
        self, snapshot: Mapping[str, Any], points: Sequence[Mapping[str, Any]]
    ) -> int | None:
        """Insert a snapshot, its points and their history rollups
        (``history_rollups.add_snapshot``); None (and nothing written) when its
        (project, scope, tick) already exists. The caller commits all in one transaction."""
        dialect = (
            self.db.get_bind().dialect.name
            if isinstance(self.db, Session)
            else self.db.dialect.name
        )
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        if "lean" not in snapshot and isinstance(snapshot.get("result"), Mapping):
            lean = lean_result(snapshot["result"])  # SQL NULL, not a JSON null, when none
            snapshot = {**snapshot, "lean": null() if lean is None else lean}
        statement = (
            insert(Snapshot)
            .values(**snapshot)
            .on_conflict_do_nothing(index_elements=["project_id", "scope", "tick"])
            .returning(Snapshot.id)
        )
        snapshot_id = self.db.execute(statement).scalar()
        if snapshot_id is None:
            return None
        counted = insert(SnapshotCount).values(
            project_id=snapshot["project_id"], scope=snapshot["scope"], snapshots=1
        )
        self.db.execute(
            counted.on_conflict_do_update(
                index_elements=["project_id", "scope"],
                set_={"snapshots": SnapshotCount.snapshots + 1},
            )
        )
        shared = {
            "snapshot_id": snapshot_id,
            "project_id": snapshot["project_id"],
            "scope": snapshot["scope"],
            "computed_at": snapshot["computed_at"],
            "as_of": snapshot["as_of"],
        }
        if points:
            self.db.execute(MetricPoint.__table__.insert(), [{**shared, **p} for p in points])
            # the history's rollups, in the same transaction: 5 upserts per point
            history_rollups.add_snapshot(
                self.db, int(snapshot_id), _micros(snapshot["as_of"]),
                _micros(snapshot["computed_at"]),
            )  # fmt: skip
        return int(snapshot_id)

    def snapshot_at(
        self, project_id: int, scope: str, at: datetime | None
    ) -> dict[str, Any] | None:
        """The latest snapshot of ``scope`` measured at or before ``at`` (None: the latest)."""
        query = select(Snapshot).where(*_latest_at(project_id, scope, at))
        found = self.db.execute(query.order_by(Snapshot.tick.desc()).limit(1))
        snapshot = found.scalar()
        return None if snapshot is None else _snapshot_dict(snapshot)

    def snapshot_parts_at(
        self, project_id: int, scope: str, at: datetime | None, keys: Sequence[str]
    ) -> dict[str, Any] | None:
        """Only the named top-level parts of the result of the snapshot ``snapshot_at`` would
        return, read out of the JSON by the database: a page that needs a snapshot's rater
        section does not read (and parse) its 40,000 pairs; nor, when it keeps its ``lean``
        copy and the pairs are not asked for, decompress them."""
        found_id = self._latest_id(project_id, scope, at)
        if found_id is None:
            return None
        snapshot_id, has_lean = found_id
        source = Snapshot.lean if has_lean and "pairwise_cohen" not in keys else Snapshot.result
        parts = [source[key].label(key) for key in keys]
        row = self.db.execute(select(*parts).where(Snapshot.id == snapshot_id)).one()
        found = dict(row._mapping)
        return {"id": snapshot_id, "result": {k: v for k, v in found.items() if v is not None}}

    def _latest_id(
        self, project_id: int, scope: str, at: datetime | None
    ) -> tuple[int, bool] | None:
        """(id, keeps a ``lean`` copy) of the snapshot ``snapshot_at`` would return."""
        query = select(Snapshot.id, Snapshot.lean.is_not(None)).where(
            *_latest_at(project_id, scope, at)
        )
        row = self.db.execute(query.order_by(Snapshot.tick.desc()).limit(1)).first()
        return None if row is None else (int(row[0]), bool(row[1]))

    def snapshot_without_at(
        self, project_id: int, scope: str, at: datetime | None, key: str
    ) -> dict[str, Any] | None:
        """``snapshot_at`` with one top-level part of the result left out by the database
        (a page of many raters does not read and parse tens of thousands of pairs)."""
        found_id = self._latest_id(project_id, scope, at)
        if found_id is None:
            return None
        columns = [getattr(Snapshot, name) for name in snapshot_columns() if name != "result"]
        if found_id[1] and key == "pairwise_cohen":  # its lean copy: the pairs left out
            row = self.db.execute(
                select(*columns, Snapshot.lean.label("result")).where(Snapshot.id == found_id[0])
            ).one()
            return dict(row._mapping)
        bind = self.db if isinstance(self.db, Connection) else self.db.get_bind()
        trimmed: Any
        if bind.dialect.name == "postgresql":
            trimmed = Snapshot.result.op("-")(key)
        else:
            trimmed = func.json_remove(Snapshot.result, f"$.{key}")
        query = select(*columns, type_coerce(trimmed, Snapshot.result.type).label("result"))
        row = self.db.execute(query.where(Snapshot.id == found_id[0])).one()
        return dict(row._mapping)

    def pair_points(self, snapshot_id: int, metric: str) -> list[tuple[str, Any]]:
        """(subject id "a|b", (value, ci_low, ci_high, n, reason)) of one snapshot's pairs."""
        p = MetricPoint
        rows = self.db.execute(
            select(p.subject_id, p.value, p.ci_low, p.ci_high, p.n, p.reason).where(
                p.snapshot_id == snapshot_id, p.metric == metric, p.subject_kind == "pair"
            )
        )
        return [(row[0], tuple(row[1:])) for row in rows]

    def weakest_pairs(
        self, snapshot_id: int, metric: str, min_n: int, limit: int
    ) -> tuple[list[tuple[str, Any]], int]:
        """The ``limit`` lowest defined pair points of one snapshot on at least ``min_n``
        items, lowest first, as ``pair_points`` gives them, and how many pairs it has: ordered
        and cut by the database (a page of 200 raters does not read their 19,900 pairs), and
        kept per process on PostgreSQL (``_IMMUTABLE``): a snapshot's points never change."""
        key = self._immutable_key(snapshot_id, ("weakest_pairs", metric, min_n, limit))
        if key is not None and (kept := _IMMUTABLE.get(key)) is not None:
            return list(kept[0]), kept[1]
        p = MetricPoint
        mine = (p.snapshot_id == snapshot_id, p.metric == metric, p.subject_kind == "pair")
        rows = self.db.execute(
            select(p.subject_id, p.value, p.ci_low, p.ci_high, p.n, p.reason)
            .where(*mine, p.value.is_not(None), p.n >= min_n)
            .order_by(p.value, p.subject_id)
            .limit(limit)
        )
        lowest = [(row[0], tuple(row[1:])) for row in rows]
        total = self.db.execute(select(func.count()).select_from(p).where(*mine)).scalar_one()
        if key is not None:
            _IMMUTABLE.put(key, (tuple(lowest), int(total)))
        return lowest, int(total)

    def _immutable_key(self, snapshot_id: int, what: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """A per-process cache key for a read of one snapshot's points; None on SQLite
        (embedded: nothing to save). The row's ``xmin`` (the transaction that wrote it) is in
        the key, so a snapshot id used again after a deletion (tests reset the sequences) is
        another key."""
        bind = self.db if isinstance(self.db, Connection) else self.db.get_bind()
        if bind.dialect.name != "postgresql":
            return None
        tag = self.db.execute(
            text("SELECT xmin::text FROM snapshots WHERE id = :id"), {"id": snapshot_id}
        ).scalar()
        if tag is None:
            return None
        url = bind.engine.url.render_as_string(hide_password=True)
        return (url, snapshot_id, tag, *what)

    def count_snapshots(self, project_id: int) -> dict[str, int]:
        """Snapshots per scope, as counted when written (``SnapshotCount``)."""
        c = SnapshotCount
        rows = self.db.execute(select(c.scope, c.snapshots).where(c.project_id == project_id))
        return {row[0]: int(row[1]) for row in rows if row[1]}

    def history(
        self,
        project_id: int,
        metric: str,
        subject_kind: str,
        subject_id: str,
        scopes: Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        after: HistoryCursor | None = None,
        limit: int | None = None,
    ) -> list[HistoryPointRow]:
        """Points of one metric and subject in (as_of, scope, snapshot) order (the index serves
        this read); with ``after``, only those past that point, and at most ``limit``."""
        p = MetricPoint
        query = select(
            p.scope,
            p.as_of,
            p.computed_at,
            p.value,
            p.ci_low,
            p.ci_high,
            p.n,
            p.reason,
            p.snapshot_id,
        ).where(
            p.project_id == project_id,
            p.metric == metric,
            p.subject_kind == subject_kind,
            p.subject_id == subject_id,
        )
        if scopes:
            query = query.where(p.scope.in_(list(scopes)))
        if since is not None:
            query = query.where(p.as_of >= since)
        if until is not None:
            query = query.where(p.as_of <= until)
        if after is not None:
            at, scope, snapshot_id = after
            query = query.where(
                or_(
                    p.as_of > at,
                    and_(
                        p.as_of == at,
                        or_(p.scope > scope, and_(p.scope == scope, p.snapshot_id > snapshot_id)),
                    ),
                )
            )
        query = query.order_by(p.as_of, p.scope, p.snapshot_id)
        rows = self.db.execute(query if limit is None else query.limit(limit)).all()
        return [HistoryPointRow(**row._mapping) for row in rows]

    def bounded_history(
        self,
        project_id: int,
        metric: str,
        subject_kind: str,
        *,
        subjects: Sequence[str] | None = None,
        scopes: Sequence[str] | None = None,
        since: datetime | None = None,
        buckets: int = BUCKETS,
    ) -> dict[tuple[str, str], list[HistoryPointRow]]:
        """(subject, scope) -> at most a chart's worth of points, in one query
        (``auditor.storage.history_buckets``)."""
        return bucketed_history(
            self.db, project_id, metric, subject_kind, subjects=subjects, scopes=scopes,
            since=since, buckets=buckets,
        )  # fmt: skip

    def known_metrics(self, project_id: int) -> list[tuple[str, str, str]]:
        """Distinct (metric, subject_kind, subject_id) of a project, for error messages."""
        rows = self.db.execute(
            select(MetricPoint.metric, MetricPoint.subject_kind, MetricPoint.subject_id)
            .where(MetricPoint.project_id == project_id)
            .distinct()
        ).all()
        return sorted((r[0], r[1], r[2]) for r in rows)

    def snapshot_by_id(self, snapshot_id: int) -> dict[str, Any] | None:
        """One snapshot by id (the full pass a snapshot from kept statistics carries parts of)."""
        snapshot = self.db.execute(select(Snapshot).where(Snapshot.id == snapshot_id)).scalar()
        return None if snapshot is None else _snapshot_dict(snapshot)

    def snapshot_facts(self, snapshot_id: int) -> dict[str, Any] | None:
        """A snapshot's metadata without its result (whether a full pass is due reads these on
        every served recompute; its result, megabytes at 200 raters, only when carried)."""
        s = Snapshot
        row = self.db.execute(
            select(s.id, s.computed_at, s.duration_ms, s.n_labels, s.settings).where(
                s.id == snapshot_id
            )
        ).first()
        return None if row is None else dict(row._mapping)
