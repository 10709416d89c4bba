"""Metric histories bounded by what a chart can show (issue 22): at most a fixed number of
points per series, chosen in SQL, so a page reads and draws the same few hundred rows whether
a series has ten snapshots or a hundred thousand.

A scope with at most ``buckets`` snapshots (in the period asked) comes back whole, point by
point. A longer one is cut into ``buckets`` equal spans of time between its first and last
snapshot, and the database aggregates each span of each series into at most three points:
its lowest value (at the span's first time), its highest (at its last time), and, when some
value in it is undefined, one undefined point with a reason. The interval drawn around them is
the span's envelope (lowest ``ci_low``, highest ``ci_high``). A drop, a peak and a stretch of
undefined values therefore stay visible, where every n-th point would skip them. The series'
first and last points are added as they are (the latest value is the one a reader looks for).
Times are BIGINT microseconds (``auditor.storage.db.UtcMicros``): the arithmetic is the same on
PostgreSQL and SQLite.

The spans come from rollups kept at write time (``auditor.storage.history_rollups``): a long
series is read as at most 8 rows a bucket of its finest fitting level, so the read does not
grow with history. A range shorter than ``buckets`` hours, and pair series (not kept), are
aggregated from the points in SQL, in ``buckets`` equal spans of time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, case, func, select, type_coerce

from auditor.domain import from_micros
from auditor.storage import history_rollups
from auditor.storage.read_records import HistoryPointRow
from auditor.storage.snapshot_models import MetricPoint, MetricRollup, Snapshot

# Buckets per series: at most 3 * BUCKETS + 2 points: a bucket every 8 pixels of a 640-pixel
# chart. Sparklines (120 pixels) take SPARK_BUCKETS.
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
    """(subject, scope) -> its points, oldest first, at most ``max_points(buckets)`` each, for
    every subject and scope asked (None: all of them)."""
    p = MetricPoint
    conditions = [p.project_id == project_id, p.metric == metric, p.subject_kind == subject_kind]
    if subjects is not None:
        conditions.append(p.subject_id.in_(list(subjects)))
    if scopes is not None:
        conditions.append(p.scope.in_(list(scopes)))
    if since is not None:
        conditions.append(p.as_of >= since)
    by_snapshot = [p.metric == metric, p.subject_kind == subject_kind]
    if subjects is not None:
        by_snapshot.append(p.subject_id.in_(list(subjects)))
    r = MetricRollup
    kept = [r.project_id == project_id, r.metric == metric, r.subject_kind == subject_kind]
    if subjects is not None:
        kept.append(r.subject_id.in_(list(subjects)))
    found: dict[tuple[str, str], list[HistoryPointRow]] = {}
    for scope, (count, first, last, few) in _spans(db, project_id, scopes, since, buckets).items():
        where = [*conditions, p.scope == scope]
        if count <= buckets:
            # by the snapshots' ids (unique index): the series' index puts the subject before
            # the scope, so "every rater's 7d points" would walk their cumulative ones too
            _add_raw(found, db.execute(_raw([*by_snapshot, p.snapshot_id.in_(few)])))
            continue
        chosen = None
        if subject_kind not in history_rollups.NOT_KEPT:
            chosen = history_rollups.plan(first, last, buckets)
        if chosen is None:
            _add(found, db.execute(_aggregated(where, first, last, buckets)))
        else:
            summaries = history_rollups.rollup_buckets(
                db, [*kept, r.scope == scope], where, first, last, buckets, chosen,
                exact_start=since is not None,
            )  # fmt: skip
            for _key, values in sorted(summaries.items(), key=lambda kv: kv[0][1]):
                _add_bucket(found, values)
        # the first and last snapshots' points by their ids through the unique index
        # (snapshot, metric, kind, subject): the ids as a subquery of times was planned as a
        # scan of the series (33 ms a series at 100,000 snapshots)
        _add_raw(found, db.execute(_raw([*by_snapshot, p.snapshot_id.in_(few)])))
    for points in found.values():
        points.sort(key=lambda point: (point.as_of, point.snapshot_id))
    return found


def _spans(
    db: Any, project_id: int, scopes: Sequence[str] | None, since: datetime | None, buckets: int
) -> dict[str, tuple[int, int, int, list[int]]]:
    """scope -> (snapshots, up to ``buckets + 1``; first and last as_of in microseconds; the
    snapshots' ids when at most ``buckets``, else the first's and the last's), from the
    snapshots table by index probes: no count over a long history."""
    s = Snapshot
    at = type_coerce(s.as_of, BigInteger)
    names = list(scopes) if scopes is not None else _scopes_of(db, project_id)
    found: dict[str, tuple[int, int, int, list[int]]] = {}
    for scope in names:
        where = [s.project_id == project_id, s.scope == scope]
        if since is not None:
            where.append(s.as_of >= since)
        few = db.execute(select(at, s.id).where(*where).order_by(s.as_of).limit(buckets + 1))
        rows = [(int(t), int(i)) for t, i in few]
        if not rows:
            continue
        if len(rows) <= buckets:
            found[scope] = (len(rows), rows[0][0], rows[-1][0], [i for _, i in rows])
            continue
        newest = db.execute(select(at, s.id).where(*where).order_by(s.as_of.desc()).limit(1))
        last, last_id = newest.one()
        found[scope] = (len(rows), rows[0][0], int(last), [rows[0][1], int(last_id)])
    return found


def _scopes_of(db: Any, project_id: int) -> list[str]:
    rows = db.execute(select(Snapshot.scope).where(Snapshot.project_id == project_id).distinct())
    return [row[0] for row in rows]


_COLUMNS = ("scope", "as_of", "computed_at", "value", "ci_low", "ci_high", "n", "reason")


def _raw(where: list[Any]) -> Any:
    p = MetricPoint
    return select(
        p.subject_id, p.scope, p.as_of, p.computed_at, p.value, p.ci_low, p.ci_high, p.n,
        p.reason, p.snapshot_id,
    ).where(*where)  # fmt: skip


def _aggregated(where: list[Any], first: int, last: int, buckets: int) -> Any:
    p = MetricPoint
    at = type_coerce(p.as_of, BigInteger)
    computed = type_coerce(p.computed_at, BigInteger)
    bucket = ((at - first) * buckets // (last - first + 1)).label("bucket")
    undefined = case((p.value.is_(None), 1), else_=0)
    return (
        select(
            p.subject_id,
            p.scope,
            bucket,
            func.min(p.value).label("low"),
            func.max(p.value).label("high"),
            func.min(case((p.value.is_not(None), at))).label("low_at"),
            func.max(case((p.value.is_not(None), at))).label("high_at"),
            func.min(p.ci_low).label("ci_low"),
            func.max(p.ci_high).label("ci_high"),
            func.max(p.n).label("n"),
            func.sum(undefined).label("undefined"),
            func.min(case((p.value.is_(None), at))).label("undefined_at"),
            func.min(case((p.value.is_(None), p.reason))).label("reason"),
            func.max(computed).label("computed_at"),
            func.max(p.snapshot_id).label("snapshot_id"),
        )
        .where(*where)
        .group_by(p.subject_id, p.scope, bucket)
    )


def _add_raw(found: dict[tuple[str, str], list[HistoryPointRow]], rows: Any) -> None:
    """Points as they are (``_raw``'s columns, by position: a 200-rater page's sparklines are
    hundreds of rows, and a mapping per row cost more than the rest of their handling)."""
    for subject, scope, as_of, computed, value, low, high, n, reason, snapshot_id in rows:
        series = found.setdefault((subject, scope), [])
        if not any(p.snapshot_id == snapshot_id for p in series[-3:]):
            point = (scope, as_of, computed, value, low, high, n, reason, snapshot_id)
            series.append(HistoryPointRow(*point))


def _add(found: dict[tuple[str, str], list[HistoryPointRow]], rows: Any) -> None:
    for row in rows:
        values = dict(row._mapping)
        key = (values["subject_id"], values["scope"])
        series = found.setdefault(key, [])
        if "bucket" not in values:  # a raw point
            if not any(p.snapshot_id == values["snapshot_id"] for p in series[-3:]):
                series.append(HistoryPointRow(**{k: values[k] for k in (*_COLUMNS, "snapshot_id")}))
            continue
        _add_bucket(found, values)


def _add_bucket(found: dict[tuple[str, str], list[HistoryPointRow]], values: Any) -> None:
    """A span's summary (``history_rollups.FIELDS``) as up to three points of its series."""
    series = found.setdefault((values["subject_id"], values["scope"]), [])
    computed = from_micros(int(values["computed_at"]))
    common = {"scope": values["scope"], "computed_at": computed, "n": values["n"]}
    if values["low"] is not None:
        # the span's lowest value at its first defined time, its highest at its last: the
        # line goes down to the low and up to the high within the span
        for value, moment in (
            (values["low"], values["low_at"]),
            (values["high"], values["high_at"]),
        ):
            series.append(
                HistoryPointRow(
                    as_of=from_micros(int(moment)),
                    value=value,
                    ci_low=values["ci_low"],
                    ci_high=values["ci_high"],
                    reason=None,
                    snapshot_id=-1,
                    **common,
                )
            )
            if values["low_at"] == values["high_at"]:
                break
    if values["undefined"]:
        series.append(
            HistoryPointRow(
                as_of=from_micros(int(values["undefined_at"])),
                value=None,
                ci_low=None,
                ci_high=None,
                reason=values["reason"] or "undefined",
                snapshot_id=-1,
                **common,
            )
        )
