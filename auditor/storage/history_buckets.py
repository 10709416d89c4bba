"""Metric histories bounded by what a chart can show (issue 22): at most a fixed number of
points per series, chosen in SQL so a page reads the same few hundred rows whether a series
has ten snapshots or a hundred thousand.

Each series (subject and scope) is cut into ``buckets`` equal spans of time between its first
and last point; of each bucket the query keeps the point with the lowest value, the one with
the highest and the first undefined one, plus the series' first and last points. A drop, a
peak and a stretch of undefined values therefore stay visible (every n-th point would skip
them). A series with at most ``buckets`` points comes back whole. Times are BIGINT
microseconds (``auditor.storage.db.UtcMicros``), so the arithmetic is the same on PostgreSQL
and SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, case, func, or_, select, type_coerce

from auditor.storage.read_records import HistoryPointRow
from auditor.storage.snapshot_models import MetricPoint

# Buckets per series: at most 3 * BUCKETS + 2 points (lowest, highest, first undefined per
# bucket; the ends): a bucket every 9 pixels of a 640-pixel chart. Sparklines (120 pixels)
# take SPARK_BUCKETS.
BUCKETS = 60
SPARK_BUCKETS = 20


def max_points(buckets: int = BUCKETS) -> int:
    return 3 * buckets + 2


def bucketed_history(
    db: Any,
    project_id: int,
    metric: str,
    subject_kind: str,
    *,
    subjects: Sequence[str] | None = None,
    scopes: Sequence[str] | None = None,
    since: datetime | None = None,
    buckets: int = BUCKETS,
) -> dict[tuple[str, str], list[HistoryPointRow]]:
    """(subject, scope) -> its points, oldest first, at most ``max_points(buckets)`` each, in
    one query for every subject and scope asked (None: all of them)."""
    p = MetricPoint
    at = type_coerce(p.as_of, BigInteger)
    series = (p.subject_id, p.scope)
    conditions = [p.project_id == project_id, p.metric == metric, p.subject_kind == subject_kind]
    if subjects is not None:
        conditions.append(p.subject_id.in_(list(subjects)))
    if scopes is not None:
        conditions.append(p.scope.in_(list(scopes)))
    if since is not None:
        conditions.append(p.as_of >= since)
    first = func.min(at).over(partition_by=series)
    last = func.max(at).over(partition_by=series)
    inner = (
        select(
            p.subject_id,
            p.scope,
            p.as_of,
            p.computed_at,
            p.value,
            p.ci_low,
            p.ci_high,
            p.n,
            p.reason,
            p.snapshot_id,
            func.count().over(partition_by=series).label("total"),
            func.row_number()
            .over(partition_by=series, order_by=(p.as_of, p.snapshot_id))
            .label("position"),
            ((at - first) * buckets // (last - first + 1)).label("bucket"),
        )
        .where(*conditions)
        .subquery()
    )
    undefined = case((inner.c.value.is_(None), 1), else_=0)
    by_bucket = (inner.c.subject_id, inner.c.scope, inner.c.bucket, undefined)
    ranked = select(
        inner,
        func.row_number()
        .over(partition_by=by_bucket, order_by=(inner.c.value.asc(), inner.c.position))
        .label("lowest"),
        func.row_number()
        .over(partition_by=by_bucket, order_by=(inner.c.value.desc(), inner.c.position))
        .label("highest"),
    ).subquery()
    r = ranked.c
    query = (
        select(
            r.subject_id,
            r.scope,
            r.as_of,
            r.computed_at,
            r.value,
            r.ci_low,
            r.ci_high,
            r.n,
            r.reason,
            r.snapshot_id,
        )
        .where(
            or_(
                r.total <= buckets,
                r.lowest == 1,
                r.highest == 1,
                r.position == 1,
                r.position == r.total,
            )
        )
        .order_by(r.subject_id, r.scope, r.position)
    )
    found: dict[tuple[str, str], list[HistoryPointRow]] = {}
    for row in db.execute(query):
        values = dict(row._mapping)
        key = (values.pop("subject_id"), values["scope"])
        found.setdefault(key, []).append(HistoryPointRow(**values))
    return found
