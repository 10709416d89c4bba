"""The list / report / history reads the HTTP API serves beyond the snapshot repository
(``uow.reads``): plain values out, the unit of work's session owns the transaction. Times bound
into arithmetic are integer microseconds (see ``db.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, and_, func, literal, select, true, type_coerce
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from auditor.domain import to_micros
from auditor.storage.models import Item, Label, Project, Rater
from auditor.storage.models import Session as RaterSession
from auditor.storage.read_records import (
    HistoryPointRow,
    ItemRow,
    LatestPointRow,
    RaterLabelsRow,
    RecomputeFactRow,
    SessionRow,
    SnapshotRow,
    SnapshotSummaryRow,
)
from auditor.storage.snapshot_models import MetricPoint, Snapshot

SNAPSHOT_SUMMARY = (
    "id",
    "scope",
    "tick",
    "as_of",
    "computed_at",
    "window_start",
    "window_end",
    "watermark",
    "project_label_count",
    "n_labels",
    "n_items",
    "n_raters",
    "duration_ms",
    "code_version",
)


class ReadRepository:
    """Raters, items, sessions and snapshots of a project page by page, downsampled history,
    and the instance-wide facts of /metrics."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def list_raters(self, project_id: int, after: str | None, limit: int) -> list[RaterLabelsRow]:
        labels = (
            select(Label.rater_id, func.count().label("labels"))
            .where(Label.project_id == project_id)
            .group_by(Label.rater_id)
            .subquery()
        )
        query = (
            select(Rater.external_id, Rater.kind, func.coalesce(labels.c.labels, 0))
            .outerjoin(labels, labels.c.rater_id == Rater.id)
            .where(Rater.project_id == project_id)
        )
        if after is not None:
            query = query.where(Rater.external_id > after)
        rows = self.db.execute(query.order_by(Rater.external_id).limit(limit)).all()
        return [RaterLabelsRow(rater=r[0], kind=r[1], labels=int(r[2])) for r in rows]

    def find_rater(self, project_id: int, external_id: str) -> RaterLabelsRow | None:
        rater = self.db.execute(
            select(Rater).where(Rater.project_id == project_id, Rater.external_id == external_id)
        ).scalar()
        if rater is None:
            return None
        count = self.db.execute(
            select(func.count()).where(Label.project_id == project_id, Label.rater_id == rater.id)
        ).scalar()
        return RaterLabelsRow(rater=rater.external_id, kind=rater.kind, labels=int(count or 0))

    def list_items(self, project_id: int, after: str | None, limit: int) -> list[ItemRow]:
        query = select(Item.external_id).where(Item.project_id == project_id)
        if after is not None:
            query = query.where(Item.external_id > after)
        rows = self.db.execute(query.order_by(Item.external_id).limit(limit)).scalars()
        return [ItemRow(item=name) for name in rows]

    def find_item(self, project_id: int, external_id: str) -> ItemRow | None:
        item = self.db.execute(
            select(Item).where(Item.project_id == project_id, Item.external_id == external_id)
        ).scalar()
        if item is None:
            return None
        count = self.db.execute(
            select(func.count()).where(Label.project_id == project_id, Label.item_id == item.id)
        ).scalar()
        return ItemRow(item=item.external_id, metadata=item.meta, labels=int(count or 0))

    def list_sessions(
        self, project_id: int, rater: str | None, after: int | None, limit: int
    ) -> list[SessionRow]:
        s = RaterSession
        query = (
            select(s.id, s.external_id, Rater.external_id, s.started_at, s.ended_at)
            .join(Rater, and_(Rater.project_id == s.project_id, Rater.id == s.rater_id))
            .where(s.project_id == project_id)
        )
        if rater is not None:
            query = query.where(Rater.external_id == rater)
        if after is not None:
            query = query.where(s.id > after)
        rows = self.db.execute(query.order_by(s.id).limit(limit)).all()
        return [
            SessionRow(id=r[0], session=r[1], rater=r[2], started_at=r[3], ended_at=r[4])
            for r in rows
        ]

    def list_snapshots(
        self, project_id: int, scope: str | None, before: int | None, limit: int
    ) -> list[SnapshotSummaryRow]:
        """Newest first; ``before`` is the id cursor of the previous page's last entry."""
        columns = [getattr(Snapshot, name) for name in SNAPSHOT_SUMMARY]
        query = select(*columns).where(Snapshot.project_id == project_id)
        if scope is not None:
            query = query.where(Snapshot.scope == scope)
        if before is not None:
            query = query.where(Snapshot.id < before)
        rows = self.db.execute(query.order_by(Snapshot.id.desc()).limit(limit)).all()
        return [SnapshotSummaryRow(**row._mapping) for row in rows]

    def find_snapshot(self, project_id: int, snapshot_id: int) -> SnapshotRow | None:
        snapshot = self.db.execute(
            select(Snapshot).where(Snapshot.project_id == project_id, Snapshot.id == snapshot_id)
        ).scalar()
        if snapshot is None:
            return None
        columns = Snapshot.__table__.columns  # not ``lean``: a copy of part of ``result``
        return SnapshotRow(
            **{c.name: getattr(snapshot, c.name) for c in columns if c.name != "lean"}
        )

    def downsampled_history(
        self,
        project_id: int,
        metric: str,
        subject_kind: str,
        subject_id: str,
        scopes: list[str] | None,
        since: datetime | None,
        until: datetime | None,
        max_points: int,
    ) -> list[HistoryPointRow]:
        """At most ``max_points`` points per scope: the range [since, until] (default: the
        series' own first and last as_of) is cut into ``max_points`` equal buckets and each bucket
        keeps its last point. The bucketing and the choice run in the database (one window
        function over the index range), so a long series never travels to Python."""
        p = MetricPoint
        as_of = type_coerce(p.as_of, BigInteger)
        where = [
            p.project_id == project_id,
            p.metric == metric,
            p.subject_kind == subject_kind,
            p.subject_id == subject_id,
        ]
        if scopes:
            where.append(p.scope.in_(scopes))
        if since is not None:
            where.append(as_of >= to_micros(since))
        if until is not None:
            where.append(as_of <= to_micros(until))
        low, high = self.db.execute(select(func.min(as_of), func.max(as_of)).where(*where)).one()
        if low is None:
            return []
        low = to_micros(since) if since is not None else int(low)
        high = to_micros(until) if until is not None else int(high)
        span = high - low + 1
        columns = (p.scope, p.as_of, p.computed_at, p.value, p.ci_low, p.ci_high, p.n, p.reason)
        if self.db.get_bind().dialect.name == "postgresql":
            return self._history_by_probes(where, columns, low, span, max_points)
        bucket = ((as_of - literal(low, BigInteger)) * literal(max_points, BigInteger)) // literal(
            span, BigInteger
        )
        rank = (
            func.row_number()
            .over(partition_by=(p.scope, bucket), order_by=(as_of.desc(), p.snapshot_id.desc()))
            .label("rank")
        )
        ranked = select(*columns, p.snapshot_id, rank).where(*where).subquery()
        rows = self.db.execute(
            select(*(ranked.c[c.key] for c in columns), ranked.c.snapshot_id)
            .where(ranked.c.rank == 1)
            .order_by(ranked.c.as_of, ranked.c.scope)
        ).all()
        return [HistoryPointRow(**row._mapping) for row in rows]

    def _distinct_scopes(self, where: list[Any]) -> list[str]:
        """The scopes of a series by skipping through the history index (a loose index scan: one
        probe per scope, where DISTINCT would read every point)."""
        p = MetricPoint
        scopes: list[str] = []
        while True:
            query = select(p.scope).where(*where).order_by(p.scope).limit(1)
            if scopes:
                query = query.where(p.scope > scopes[-1])
            scope = self.db.execute(query).scalar()
            if scope is None:
                return scopes
            scopes.append(scope)

    def _history_by_probes(
        self, where: list[Any], columns: tuple[Any, ...], low: int, span: int, buckets: int
    ) -> list[HistoryPointRow]:
        """PostgreSQL: one index probe per (scope, bucket), newest point first, instead of ranking
        every point: cost grows with the number of buckets, not with the length of the series.
        Bucket k holds as_of - low in [ceil(k*span/N), ceil((k+1)*span/N)), the same buckets as
        the window-function path."""
        p = MetricPoint
        as_of = type_coerce(p.as_of, BigInteger)
        scopes = self._distinct_scopes(where)
        edges = [low + -(-k * span // buckets) for k in range(buckets + 1)]
        bounds = select(
            func.unnest(literal(edges[:-1], postgresql.ARRAY(BigInteger))).label("lo"),
            func.unnest(literal(edges[1:], postgresql.ARRAY(BigInteger))).label("hi"),
        ).subquery("bounds")
        found: list[HistoryPointRow] = []
        for scope in scopes:
            probe = (
                select(*columns, p.snapshot_id)
                .where(*where, p.scope == scope, as_of >= bounds.c.lo, as_of < bounds.c.hi)
                .order_by(as_of.desc(), p.snapshot_id.desc())
                .limit(1)
                .lateral("probe")
            )
            rows = self.db.execute(select(probe).select_from(bounds).join(probe, true())).all()
            found.extend(HistoryPointRow(**row._mapping) for row in rows)
        found.sort(key=lambda row: (row.as_of, row.scope))
        return found

    def latest_points(
        self, project_id: int | None = None, scope: str | None = None
    ) -> list[LatestPointRow]:
        """The metric points of the latest snapshot (highest tick) of every (project, scope)."""
        newest = select(
            Snapshot.project_id, Snapshot.scope, func.max(Snapshot.tick).label("tick")
        ).group_by(Snapshot.project_id, Snapshot.scope)
        if project_id is not None:
            newest = newest.where(Snapshot.project_id == project_id)
        if scope is not None:
            newest = newest.where(Snapshot.scope == scope)
        newest_sq = newest.subquery()
        latest = (
            select(Snapshot.id)
            .join(
                newest_sq,
                and_(
                    Snapshot.project_id == newest_sq.c.project_id,
                    Snapshot.scope == newest_sq.c.scope,
                    Snapshot.tick == newest_sq.c.tick,
                ),
            )
            .scalar_subquery()
        )
        p = MetricPoint
        rows = self.db.execute(
            select(
                Project.slug,
                p.scope,
                p.metric,
                p.subject_kind,
                p.subject_id,
                p.value,
                p.ci_low,
                p.ci_high,
                p.n,
                p.reason,
                p.as_of,
            )
            .join(Project, Project.id == p.project_id)
            .where(p.snapshot_id.in_(latest))
            .order_by(Project.slug, p.scope, p.metric, p.subject_kind, p.subject_id)
        ).all()
        return [LatestPointRow(**row._mapping) for row in rows]

    def recompute_facts(self) -> list[RecomputeFactRow]:
        """Per (project, scope): the latest snapshot's duration and computed_at."""
        newest = (
            select(Snapshot.project_id, Snapshot.scope, func.max(Snapshot.tick).label("tick"))
            .group_by(Snapshot.project_id, Snapshot.scope)
            .subquery()
        )
        rows = self.db.execute(
            select(Project.slug, Snapshot.scope, Snapshot.duration_ms, Snapshot.computed_at)
            .join(
                newest,
                and_(
                    Snapshot.project_id == newest.c.project_id,
                    Snapshot.scope == newest.c.scope,
                    Snapshot.tick == newest.c.tick,
                ),
            )
            .join(Project, Project.id == Snapshot.project_id)
            .order_by(Project.slug, Snapshot.scope)
        ).all()
        return [RecomputeFactRow(**row._mapping) for row in rows]

    def label_counts(self) -> dict[str, int]:
        """Labels stored per project slug (every project, zero included)."""
        counts = (
            select(Label.project_id, func.count().label("labels"))
            .group_by(Label.project_id)
            .subquery()
        )
        rows = self.db.execute(
            select(Project.slug, func.coalesce(counts.c.labels, 0)).outerjoin(
                counts, counts.c.project_id == Project.id
            )
        ).all()
        return {slug: int(count) for slug, count in rows}
