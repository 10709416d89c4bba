"""Rollups of metric histories kept at write time (issue 22 item 1): a page over a series of
100,000 snapshots reads a few hundred rows, not 100,000 points.

Per series (project, metric, subject, scope) and per span of time at each of ``LEVELS`` (an
hour, six hours, a day, a week, four weeks; each span a multiple of the finer ones, counted
from the epoch) one ``metric_rollups`` row keeps what a chart's bucket shows of the points in
the span: lowest and highest defined value, the first and last time a value was defined, the
interval envelope, the largest n, how many undefined points and the first one's time and
least reason, the newest computed_at and snapshot id. Every column merges by sum, min or max,
so the write is an upsert per level and a chart's bucket is the merge of whole spans.

Write cost: ``add_snapshot`` runs one ``INSERT ... SELECT ... ON CONFLICT DO UPDATE`` over the
snapshot's own points, in the snapshot's transaction: 5 row upserts (one a level) per point
written. Pair series are left out (a 200-rater snapshot has 19,900 pairs; no page charts
them in bulk); their rare single-series charts aggregate the points (``history_buckets``).
Snapshots are immutable and leave only with their project (whose deletion removes every
table with a project_id, this one included), so rollups never subtract.

Read (``plan``, ``rollup_buckets``): the finest level whose spans over the range number at
most ``SPANS_PER_BUCKET`` per display bucket (480 for a 60-bucket chart) is read, and its
spans are grouped into the display buckets in order. A range shorter than ``buckets`` hours
aggregates the points themselves (at most ``buckets`` hours of snapshots). When the range
starts inside a span (``since``), that first span is rebuilt from finer spans and, below an
hour, from the points: the first bucket holds exactly the points from ``since`` on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import BigInteger, and_, case, func, or_, select, text, type_coerce

from auditor.storage.snapshot_models import MetricPoint, MetricRollup, SnapshotCount

HOUR = 3600
# Span widths in seconds, finest first; each divides the next, and all count from the epoch,
# so a coarser span is a union of finer ones.
LEVELS = (HOUR, 6 * HOUR, 24 * HOUR, 7 * 24 * HOUR, 28 * 24 * HOUR)
# Up to this many spans per display bucket are read: 480 rows a 60-bucket series at most,
# up to 12 years at the coarsest level (4 weeks).
SPANS_PER_BUCKET = 8
MICROS = 1_000_000
# Not kept: see the module docstring.
NOT_KEPT = ("pair",)

_KEY = ("project_id", "metric", "subject_kind", "subject_id", "scope", "span", "span_start")


_LEVEL_ROWS = " UNION ALL ".join(f"SELECT {span} AS span" for span in LEVELS)
_MERGE = {
    "least": "CASE WHEN excluded.{c} IS NULL THEN metric_rollups.{c} "
    "WHEN metric_rollups.{c} IS NULL OR excluded.{c} < metric_rollups.{c} THEN excluded.{c} "
    "ELSE metric_rollups.{c} END",
    "greatest": "CASE WHEN excluded.{c} IS NULL THEN metric_rollups.{c} "
    "WHEN metric_rollups.{c} IS NULL OR excluded.{c} > metric_rollups.{c} THEN excluded.{c} "
    "ELSE metric_rollups.{c} END",
    "sum": "metric_rollups.{c} + excluded.{c}",
}
_HOW = {
    "points": "sum", "undefined": "sum", "low": "least", "low_at": "least",
    "ci_low": "least", "undefined_at": "least", "reason": "least", "high": "greatest",
    "high_at": "greatest", "ci_high": "greatest", "n": "greatest", "computed_at": "greatest",
    "snapshot_id": "greatest",
}  # fmt: skip
_NOT_KEPT_SQL = ", ".join(f"'{kind}'" for kind in NOT_KEPT)
# One statement for every level: each point of the snapshot becomes one row per level, merged
# into its span's row. The same text on both databases (ON CONFLICT ... DO UPDATE, excluded;
# min/max spelled as CASE: SQLite's two-argument min() is NULL when either is). The SELECT
# has a WHERE, which SQLite's parser needs before ON CONFLICT.
ADD_SQL = text(
    f"""
INSERT INTO metric_rollups (project_id, metric, subject_kind, subject_id, scope, span,
    span_start, points, low, high, low_at, high_at, ci_low, ci_high, n, undefined,
    undefined_at, reason, computed_at, snapshot_id)
SELECT p.project_id, p.metric, p.subject_kind, p.subject_id, p.scope, levels.span,
    CAST(:as_of AS BIGINT) / (CAST(levels.span AS BIGINT) * {MICROS})
        * (CAST(levels.span AS BIGINT) * {MICROS}),
    1, p.value, p.value,
    CASE WHEN p.value IS NULL THEN NULL ELSE CAST(:as_of AS BIGINT) END,
    CASE WHEN p.value IS NULL THEN NULL ELSE CAST(:as_of AS BIGINT) END,
    p.ci_low, p.ci_high, p.n,
    CASE WHEN p.value IS NULL THEN 1 ELSE 0 END,
    CASE WHEN p.value IS NULL THEN CAST(:as_of AS BIGINT) END,
    CASE WHEN p.value IS NULL THEN p.reason END,
    CAST(:computed_at AS BIGINT), p.snapshot_id
FROM metric_points AS p CROSS JOIN ({_LEVEL_ROWS}) AS levels
WHERE p.snapshot_id = :snapshot AND p.subject_kind NOT IN ({_NOT_KEPT_SQL})
ON CONFLICT ({", ".join(_KEY)}) DO UPDATE SET
    {", ".join(f"{c} = " + _MERGE[how].format(c=c) for c, how in _HOW.items())}
"""
)


def add_snapshot(db: Any, snapshot_id: int, as_of: int, computed_at: int) -> None:
    """Fold one snapshot's points (just inserted, same transaction) into the rollups of every
    level: one statement. ``as_of`` and ``computed_at`` in microseconds."""
    db.execute(ADD_SQL, {"snapshot": snapshot_id, "as_of": as_of, "computed_at": computed_at})


# The rollups of existing points, per level: the same SQL on both databases (times are BIGINT
# microseconds; integer division). migrations/versions/0023 keeps its own copy.
REBUILD_SQL = """
INSERT INTO metric_rollups (project_id, metric, subject_kind, subject_id, scope, span,
    span_start, points, low, high, low_at, high_at, ci_low, ci_high, n, undefined,
    undefined_at, reason, computed_at, snapshot_id)
SELECT project_id, metric, subject_kind, subject_id, scope, {span}, as_of / {width} * {width},
    count(*), min(value), max(value),
    min(CASE WHEN value IS NOT NULL THEN as_of END),
    max(CASE WHEN value IS NOT NULL THEN as_of END),
    min(ci_low), max(ci_high), max(n),
    sum(CASE WHEN value IS NULL THEN 1 ELSE 0 END),
    min(CASE WHEN value IS NULL THEN as_of END),
    min(CASE WHEN value IS NULL THEN reason END),
    max(computed_at), max(snapshot_id)
FROM metric_points
WHERE subject_kind <> 'pair' AND {where}
GROUP BY project_id, metric, subject_kind, subject_id, scope, as_of / {width}
"""


def rebuild(db: Any, project_id: int) -> None:
    """Recompute one project's rollups from its points, and its snapshot counts (a benchmark
    that writes snapshots and points straight through the tables; migration 0023 does the
    same for every project)."""
    db.execute(MetricRollup.__table__.delete().where(MetricRollup.project_id == project_id))
    for span in LEVELS:
        sql = REBUILD_SQL.format(span=span, width=span * MICROS, where="project_id = :project")
        db.execute(text(sql), {"project": project_id})
    db.execute(SnapshotCount.__table__.delete().where(SnapshotCount.project_id == project_id))
    db.execute(
        text(
            "INSERT INTO snapshot_counts (project_id, scope, snapshots) SELECT project_id, "
            "scope, count(*) FROM snapshots WHERE project_id = :project GROUP BY project_id, scope"
        ),
        {"project": project_id},
    )


# --- reads --------------------------------------------------------------------------------

Bucket = dict[str, Any]
_MERGE_MIN = ("low", "low_at", "ci_low", "undefined_at", "reason")
_MERGE_MAX = ("high", "high_at", "ci_high", "n", "computed_at", "snapshot_id")
_MERGE_SUM = ("points", "undefined")
FIELDS = (*_MERGE_SUM, *_MERGE_MIN, *_MERGE_MAX)


def plan(first: int, last: int, buckets: int) -> tuple[int, int] | None:
    """(span width in seconds, spans from the one holding ``first`` to the one holding
    ``last``) to read for a series between these times (microseconds); None when the range is
    shorter than ``buckets`` hours (the points themselves are few enough to aggregate)."""
    for span in LEVELS:
        width = span * MICROS
        count = last // width - first // width + 1
        if count <= SPANS_PER_BUCKET * buckets:
            break
    if span == LEVELS[0] and count < buckets:
        return None
    return span, count


def merge(into: Bucket | None, row: Mapping[str, Any]) -> Bucket:
    """Two summaries of points as one (min/max ignoring None, sums)."""
    if into is None:
        return {k: row[k] for k in ("subject_id", "scope", *FIELDS)}
    for key in _MERGE_SUM:
        into[key] = (into[key] or 0) + (row[key] or 0)
    for key in _MERGE_MIN:
        if row[key] is not None and (into[key] is None or row[key] < into[key]):
            into[key] = row[key]
    for key in _MERGE_MAX:
        if row[key] is not None and (into[key] is None or row[key] > into[key]):
            into[key] = row[key]
    return into


def rollup_buckets(
    db: Any,
    conditions: Sequence[Any],
    point_conditions: Sequence[Any],
    first: int,
    last: int,
    buckets: int,
    chosen: tuple[int, int],
    exact_start: bool,
) -> dict[tuple[str, int], Bucket]:
    """(subject, display bucket) -> the merged summary of its spans, for the series of one
    scope selected by ``conditions`` (on ``MetricRollup``), from ``first`` to ``last``
    (microseconds). ``exact_start``: points before ``first`` in its span are not to be
    counted (the range starts at ``since``): that span is rebuilt from finer levels and from
    the points (``point_conditions``, on ``MetricPoint``) of ``first``'s hour."""
    span, count = chosen
    width = span * MICROS
    start = first // width * width
    r = MetricRollup
    edge = exact_start and start < first
    rows: list[tuple[int, Mapping[str, Any]]] = []
    main = db.execute(
        select(r.subject_id, r.scope, r.span_start, *(getattr(r, k) for k in FIELDS)).where(
            *conditions,
            r.span == span,
            r.span_start >= (start + width if edge else start),
            r.span_start <= last // width * width,
        )
    )
    for row in main:
        values = row._mapping
        index = (int(values["span_start"]) - start) // width
        rows.append((index * buckets // count, values))
    if edge:
        rows.extend(
            (0, values) for values in _first_span(db, conditions, point_conditions, first, span)
        )
    found: dict[tuple[str, int], Bucket] = {}
    for bucket, values in rows:
        key = (values["subject_id"], bucket)
        found[key] = merge(found.get(key), values)
    return found


def _first_span(
    db: Any, conditions: Sequence[Any], point_conditions: Sequence[Any], first: int, span: int
) -> Iterable[Mapping[str, Any]]:
    """Summaries covering exactly [first, end of first's span at ``span``): the points up to
    the next hour, then each finer level's whole spans up to the next boundary of the level
    above (fewer than 28 rows a series: 6 + 4 + 7 + 4 at most)."""
    finer = [s for s in LEVELS if s < span]
    ends = [-(-first // (s * MICROS)) * s * MICROS for s in (*finer, span)]
    p = MetricPoint
    at = type_coerce(p.as_of, BigInteger)
    computed = type_coerce(p.computed_at, BigInteger)
    undefined = p.value.is_(None)
    points = db.execute(
        select(
            p.subject_id,
            p.scope,
            func.count().label("points"),
            func.min(p.value).label("low"),
            func.max(p.value).label("high"),
            func.min(case((~undefined, at))).label("low_at"),
            func.max(case((~undefined, at))).label("high_at"),
            func.min(p.ci_low).label("ci_low"),
            func.max(p.ci_high).label("ci_high"),
            func.max(p.n).label("n"),
            func.sum(case((undefined, 1), else_=0)).label("undefined"),
            func.min(case((undefined, at))).label("undefined_at"),
            func.min(case((undefined, p.reason))).label("reason"),
            func.max(computed).label("computed_at"),
            func.max(p.snapshot_id).label("snapshot_id"),
        )
        .where(*point_conditions, at >= first, at < ends[0])
        .group_by(p.subject_id, p.scope)
    )
    yield from (row._mapping for row in points)
    if not finer:
        return
    r = MetricRollup
    pieces = [
        and_(r.span == s, r.span_start >= low, r.span_start < high)
        for s, low, high in zip(finer, ends[:-1], ends[1:], strict=True)
        if low < high
    ]
    if pieces:
        rollups = db.execute(
            select(r.subject_id, r.scope, *(getattr(r, k) for k in FIELDS)).where(
                *conditions, or_(*pieces)
            )
        )
        yield from (row._mapping for row in rollups)
