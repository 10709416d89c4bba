"""Bounded histories (issue 22 item 1): a chart's series is read from the database as at most
``max_points`` rows, whatever the history's length, and keeps what a reader must see: the
lowest and highest values of each span (a one-snapshot drop), undefined stretches, the first
and the last point. On both backends (the bucketing is SQL)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from auditor.services.projects.projects import create_project
from auditor.storage.history_buckets import BUCKETS, bucketed_history, max_points
from auditor.storage.models import Project
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
