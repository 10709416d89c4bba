"""Downsampling is the last value per equal time bucket, on both backends (two code paths:
a window function on SQLite, index probes on PostgreSQL), checked against plain Python."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from auditor.domain import to_micros
from auditor.services.projects.projects import create_project
from auditor.services.queries.project_reads import history
from auditor.storage.snapshot_models import MetricPoint, Snapshot
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _insert(engine, project_id: int, scope: str, times: list[datetime], offset: int) -> None:
    snapshots, points = [], []
    for i, at in enumerate(times):
        micros = to_micros(at)
        snapshots.append(
            {
                "id": offset + i + 1, "project_id": project_id, "scope": scope, "tick": offset + i,
                "computed_at": micros, "as_of": micros, "window_start": None, "window_end": None,
                "watermark": 0, "project_label_count": 0, "n_labels": 0, "n_items": 0,
                "n_raters": 0, "n_pairable_items": 0, "categories": [], "settings": {},
                "code_version": "t", "seed": None, "interval_method": "none",
                "interval_level": None, "duration_ms": 1.0, "result": {},
            }
        )  # fmt: skip
        points.append(
            {
                "snapshot_id": offset + i + 1, "project_id": project_id, "scope": scope,
                "computed_at": micros, "as_of": micros, "metric": "kappa_s",
                "subject_kind": "project", "subject_id": "", "value": float(offset + i),
                "ci_low": None, "ci_high": None, "n": 1, "reason": None,
            }
        )  # fmt: skip
    with engine.begin() as connection:
        connection.execute(Snapshot.__table__.insert(), snapshots)
        connection.execute(MetricPoint.__table__.insert(), points)


def _expected(times: list[datetime], offset: int, low: int, high: int, n: int) -> list[float]:
    span = high - low + 1
    last: dict[int, tuple[int, float]] = {}
    for i, at in enumerate(times):
        micros = to_micros(at)
        if low <= micros <= high:
            bucket = (micros - low) * n // span
            if bucket not in last or micros >= last[bucket][0]:
                last[bucket] = (micros, float(offset + i))
    return [value for _, value in sorted(last.values())]


@pytest.mark.parametrize("n", [1, 7, 50, 1000])
def test_last_value_per_bucket_matches_python(engine, n: int) -> None:
    create_project(UnitOfWork(engine), "series", ["a", "b"])
    with engine.connect() as connection:
        project_id = connection.exec_driver_sql("SELECT id FROM projects").scalar()
    rng = random.Random(n)
    times = sorted({T0 + timedelta(seconds=rng.randrange(10**6)) for _ in range(400)})
    other = sorted({T0 + timedelta(seconds=rng.randrange(10**6)) for _ in range(50)})
    _insert(engine, project_id, "cumulative", times, 0)
    _insert(engine, project_id, "7d", other, 10_000)
    uow = UnitOfWork(engine, read_only=True)

    rows = history(uow, "series", "kappa_s", subject=None, scopes=["cumulative"],
                   since=None, until=None, max_points=n)  # fmt: skip
    low, high = to_micros(times[0]), to_micros(times[-1])
    assert [r.value for r in rows] == _expected(times, 0, low, high, n)
    assert len(rows) <= n

    since, until = times[50], times[300]
    rows = history(uow, "series", "kappa_s", subject=None, scopes=None,
                   since=since, until=until, max_points=n)  # fmt: skip
    low, high = to_micros(since), to_micros(until)
    cumulative = [r.value for r in rows if r.scope == "cumulative"]
    window = [r.value for r in rows if r.scope == "7d"]
    assert cumulative == _expected(times, 0, low, high, n)
    assert window == _expected(other, 10_000, low, high, n)
