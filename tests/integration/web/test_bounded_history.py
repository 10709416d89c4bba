"""Bounded histories (issue 22 item 1): a chart's series is read from the database as at most
``max_points`` rows, whatever the history's length, and keeps what a reader must see: the
lowest and highest values of each span (a one-snapshot drop), undefined stretches, the first
and the last point. On both backends (the bucketing is SQL)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest
from sqlalchemy import BigInteger, func, select, type_coerce
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from auditor.domain import from_micros, to_micros
from auditor.services.projects.projects import create_project
from auditor.storage import history_rollups
from auditor.storage.history_buckets import BUCKETS, bucketed_history, max_points
from auditor.storage.import_repository import ImportRepository
from auditor.storage.models import Project
from auditor.storage.snapshot_models import MetricPoint, MetricRollup, Snapshot
from auditor.storage.snapshot_repository import SnapshotRepository
from auditor.storage.unit_of_work import UnitOfWork

START = datetime(2026, 1, 1, tzinfo=UTC)


def _snapshot(project_id: int, i: int, at: datetime) -> dict[str, Any]:
    return dict(
        project_id=project_id, scope="cumulative", tick=i, computed_at=at, as_of=at,
        window_start=None, window_end=None, watermark=i, project_label_count=i, n_labels=i,
        n_items=i, n_raters=2, n_pairable_items=i, categories=["a", "b"], settings={},
        code_version="test", seed=None, interval_method="jackknife", interval_level=0.95,
        duration_ms=1.0, result={},
    )  # fmt: skip


def _history(
    engine: Engine,
    values: list[float | None],
    times: list[datetime] | None = None,
    subjects: tuple[tuple[str, str], ...] = (("project", ""),),
    ci: list[tuple[float | None, float | None]] | None = None,
) -> int:
    """A project whose cumulative kappa_s takes ``values``, one snapshot an hour (or at
    ``times``), written as the recompute writes them (points and rollups)."""
    slug = f"long-{uuid4().hex[:6]}"
    create_project(UnitOfWork(engine), slug, ["a", "b"])
    with Session(engine) as session, session.begin():
        project_id = session.execute(select(Project.id).where(Project.slug == slug)).scalar_one()
        repository = SnapshotRepository(session)
        for i, value in enumerate(values):
            at = times[i] if times is not None else START + timedelta(hours=i)
            low, high = ci[i] if ci is not None else (None, None)
            point = {
                "metric": "kappa_s", "value": value, "ci_low": low, "ci_high": high,
                "n": 10 + i % 7, "reason": None if value is not None else f"reason {i % 3}",
            }  # fmt: skip
            points = [
                {**point, "subject_kind": kind, "subject_id": subject} for kind, subject in subjects
            ]
            repository.insert_snapshot(_snapshot(project_id, i, at), points)
    return project_id


def test_a_long_history_is_read_as_a_bounded_series_that_keeps_drops_and_gaps(
    engine: Engine,
) -> None:
    n = 2000
    values: list[float | None] = [0.8 + 0.01 * math.sin(i / 50) for i in range(n)]
    values[777] = 0.1  # one bad snapshot
    values[1500] = 0.99  # one peak
    for i in range(1200, 1230):
        values[i] = None  # an undefined stretch
    project_id = _history(engine, values)
    with Session(engine) as session:
        found = bucketed_history(session, project_id, "kappa_s", "project")
    points = found[("", "cumulative")]
    assert len(points) <= max_points(BUCKETS)
    assert len(points) < n / 5
    kept = [p.value for p in points]
    assert 0.1 in kept and 0.99 in kept
    assert any(p.value is None for p in points)
    assert points[0].as_of == START and points[-1].as_of == START + timedelta(hours=n - 1)
    assert [p.as_of for p in points] == sorted(p.as_of for p in points)


def test_a_short_history_comes_back_whole(engine: Engine) -> None:
    values: list[float | None] = [0.5, None, 0.7]
    project_id = _history(engine, values)
    with Session(engine) as session:
        found = bucketed_history(session, project_id, "kappa_s", "project")
    assert [p.value for p in found[("", "cumulative")]] == values


# --- rollups (auditor.storage.history_rollups) -------------------------------------------------


def _oracle(
    points: list[tuple[int, float | None, float | None, float | None, int, str | None, int]],
    since: int | None,
    buckets: int,
) -> tuple[dict[int, dict[str, Any]], tuple[int, int] | None]:
    """Display bucket -> the summary of its points, computed from the points themselves:
    (as_of, value, ci_low, ci_high, n, reason, snapshot_id), every snapshot's as_of distinct."""
    kept = [p for p in points if since is None or p[0] >= since]
    first, last = kept[0][0], kept[-1][0]
    chosen = history_rollups.plan(first, last, buckets)
    if chosen is None:
        return {}, None
    span, count = chosen
    width = span * history_rollups.MICROS
    found: dict[int, dict[str, Any]] = {}
    for at, value, low, high, n, reason, snapshot_id in kept:
        bucket = (at // width - first // width) * buckets // count
        row = {
            "subject_id": "", "scope": "cumulative", "points": 1, "low": value, "high": value,
            "low_at": None if value is None else at, "high_at": None if value is None else at,
            "ci_low": low, "ci_high": high, "n": n, "undefined": int(value is None),
            "undefined_at": at if value is None else None,
            "reason": reason if value is None else None, "computed_at": at,
            "snapshot_id": snapshot_id,
        }  # fmt: skip
        found[bucket] = history_rollups.merge(found.get(bucket), row)
    return found, chosen


def _served(
    session: Session, project_id: int, since: int | None, buckets: int, chosen: tuple[int, int]
) -> dict[int, dict[str, Any]]:
    r, p = MetricRollup, MetricPoint
    first, last = _ends(session, project_id, since)
    kept = [r.project_id == project_id, r.metric == "kappa_s", r.subject_kind == "project"]
    raw = [p.project_id == project_id, p.metric == "kappa_s", p.subject_kind == "project"]
    found = history_rollups.rollup_buckets(
        session, [*kept, r.scope == "cumulative"], [*raw, p.scope == "cumulative"], first, last,
        buckets, chosen, exact_start=since is not None,
    )  # fmt: skip
    return {bucket: {k: v for k, v in row.items()} for (_, bucket), row in found.items()}


def _ends(session: Session, project_id: int, since: int | None) -> tuple[int, int]:
    p = MetricPoint
    at = type_coerce(p.as_of, BigInteger)
    query = select(func.min(at), func.max(at)).where(p.project_id == project_id)
    if since is not None:
        query = query.where(at >= since)
    low, high = session.execute(query).one()
    return int(low), int(high)


@pytest.mark.parametrize("seed", range(6))
def test_rollup_buckets_equal_the_buckets_of_the_points(engine: Engine, seed: int) -> None:
    """Property-ish: random irregular histories (gaps, undefined runs, intervals), with and
    without a ``since`` that cuts a span: what the rollups serve equals what the points give."""
    rng = random.Random(seed)
    n = rng.choice([150, 400, 900])
    step = rng.choice([600, 3600, 5 * 3600, 30 * 3600])  # seconds between snapshots, about
    at = START
    times: list[datetime] = []
    values: list[float | None] = []
    cis: list[tuple[float | None, float | None]] = []
    for _ in range(n):
        at += timedelta(seconds=rng.randint(1, 2 * step))
        if rng.random() < 0.02:
            at += timedelta(days=rng.randint(1, 40))  # a gap
        times.append(at)
        value = None if rng.random() < 0.1 else round(rng.uniform(-0.2, 1.0), 3)
        values.append(value)
        cis.append(
            (None, None) if value is None or rng.random() < 0.2 else (value - 0.1, value + 0.1)
        )
    project_id = _history(engine, values, times=times, ci=cis)
    with Session(engine) as session:
        ids = session.execute(
            select(Snapshot.id).where(Snapshot.project_id == project_id).order_by(Snapshot.tick)
        ).scalars()
        snapshot_ids = list(ids)
    micros = [to_micros(t) for t in times]
    points = [
        (micros[i], values[i], cis[i][0], cis[i][1], 10 + i % 7,
         None if values[i] is not None else f"reason {i % 3}", snapshot_ids[i])
        for i in range(n)
    ]  # fmt: skip
    checked = 0
    for since in (None, micros[n // 3] + 1, micros[n // 2] - 7):
        for buckets in (BUCKETS, 20):
            expected, chosen = _oracle(points, since, buckets)
            if chosen is None:
                continue
            with Session(engine) as session:
                served = _served(session, project_id, since, buckets, chosen)
            assert served == expected, (since, buckets, chosen)
            checked += 1
            with Session(engine) as session:
                shown = bucketed_history(
                    session, project_id, "kappa_s", "project", buckets=buckets,
                    since=None if since is None else from_micros(since),
                )[("", "cumulative")]  # fmt: skip
            assert len(shown) <= max_points(buckets)
    assert checked


def test_a_cut_first_span_holds_only_the_points_from_since(engine: Engine) -> None:
    """A drop just before ``since``, in the same week as it, must not show: the first span is
    rebuilt from finer spans and points (fails if the week's rollup row is read whole)."""
    times = [START + timedelta(hours=3 * i) for i in range(2000)]
    values: list[float | None] = [0.8] * 2000
    values[1000] = 0.05  # the drop
    project_id = _history(engine, values, times=times)
    since = times[1001] + timedelta(minutes=5)
    with Session(engine) as session:
        shown = bucketed_history(session, project_id, "kappa_s", "project", since=since)
        everything = bucketed_history(session, project_id, "kappa_s", "project")
    assert 0.05 in [p.value for p in everything[("", "cumulative")]]
    points = shown[("", "cumulative")]
    assert min(p.value for p in points if p.value is not None) == 0.8
    assert points[0].as_of == times[1002]


def test_rollups_leave_with_their_project(engine: Engine) -> None:
    project_id = _history(engine, [0.5, 0.6])
    with Session(engine) as session, session.begin():
        assert _rollup_rows(session, project_id)
        ImportRepository(session).delete_project(project_id)
    with Session(engine) as session:
        assert not _rollup_rows(session, project_id)


def _rollup_rows(session: Session, project_id: int) -> list[tuple[Any, ...]]:
    columns = [c for c in MetricRollup.__table__.columns if c.name != "project_id"]
    rows = session.execute(
        select(*columns).where(MetricRollup.project_id == project_id).order_by(*columns[:6])
    )
    return [tuple(row) for row in rows]


def test_pair_series_are_not_rolled_up_and_still_bounded(engine: Engine) -> None:
    values: list[float | None] = [0.5 + 0.001 * i for i in range(300)]
    project_id = _history(engine, values, subjects=(("project", ""), ("pair", "a|b")))
    with Session(engine) as session:
        kinds = session.execute(
            select(MetricRollup.subject_kind).where(MetricRollup.project_id == project_id)
        ).scalars()
        assert set(kinds) == {"project"}
        pair = bucketed_history(session, project_id, "kappa_s", "pair")[("a|b", "cumulative")]
    assert len(pair) <= max_points(BUCKETS)
    assert pair[0].value == 0.5 and pair[-1].value == values[-1]
