"""Kept statistics of a rolling window (issue 22): the window moves with the clock, labels
arrive in and out of order, imports are reverted; after each step the window's state equals a
rebuild from the labels of the window at the same watermark to 1e-9. On SQLite and
PostgreSQL (the ``uow`` fixture's backends)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.domain import to_micros
from auditor.services.ingest.imports import list_imports, revert_import
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.kept import Layout, Span, build, state_of, update_kept
from auditor.services.recompute.recompute import find_project_id
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2025, 3, 1, tzinfo=UTC)
DAY = 86_400
CATEGORIES = ["a", "b", "c"]
_slugs = itertools.count()
_ticks = itertools.count()

label_rows = st.lists(
    st.tuples(
        st.integers(0, 7),  # item
        st.integers(0, 4),  # rater
        st.integers(0, 2),  # category
        st.integers(0, 20 * DAY),  # seconds after T0: in the window, before it or after it
    ),
    min_size=1,
    max_size=25,
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("ingest"), label_rows),
        st.tuples(st.just("revert"), st.integers(0, 10)),
        st.tuples(st.just("wait"), st.integers(0, 4 * DAY)),
    ),
    min_size=1,
    max_size=8,
)


def _rows(drawn: list[tuple[int, int, int, int]]) -> list[dict]:
    return [
        {
            "item": f"i{item}",
            "rater": f"r{rater}",
            "label": CATEGORIES[category],
            "labeled_at": T0 + timedelta(seconds=seconds, microseconds=next(_ticks) % 10**6),
        }
        for item, rater, category, seconds in drawn
    ]


def _span(now: datetime) -> Span:
    return Span("7d", to_micros(now - timedelta(days=7)), to_micros(now))


def _agrees(uow: UnitOfWork, project_id: int, span: Span) -> None:
    with uow:
        record = uow.kept.load(project_id, span.scope)
    assert record is not None
    assert (record.start_us, record.end_us) == (span.start_us, span.end_us)
    layout = Layout.parse(record.signature)
    assert layout is not None
    ours = state_of(record, layout)
    rebuilt, rebuilt_layout, _, count = build(uow, project_id, record.watermark, span)
    assert count == record.label_count
    # raters who left the window stay as zero rows in the kept numbering
    slots = [layout.raters.index(r) for r in rebuilt_layout.raters]
    for name, value in rebuilt.arrays().items():
        mine = ours.arrays()[name]
        for axis in range(1, value.ndim):
            if value.shape[axis] != mine.shape[axis]:
                mine = np.take(mine, slots, axis=axis)
        assert np.allclose(mine, value, atol=1e-9), name


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=steps, collapse=st.sampled_from(["first", "latest", "mode"]))
def test_window_state_equals_a_rebuild_after_every_step(
    uow: UnitOfWork, steps: list, collapse: str
) -> None:
    slug = f"w{next(_slugs)}"
    create_project(uow, slug, CATEGORIES, collapse=collapse)
    project_id = find_project_id(uow, slug)
    now = T0 + timedelta(days=8)
    for kind, argument in steps:
        if kind == "ingest":
            ingest_labels(uow, slug, _rows(argument), received_at=now)
        elif kind == "wait":
            now += timedelta(seconds=argument)
        else:
            imports = [r for r in list_imports(uow, slug) if r.reverted_at is None]
            if not imports:
                continue
            revert_import(uow, slug, imports[argument % len(imports)].id)
        with uow:
            upto = uow.snapshots.label_facts(project_id).get(project_id, (0, 0))[0] or 0
        update_kept(uow, project_id, span=_span(now), upto=upto)
        _agrees(uow, project_id, _span(now))


def test_a_moving_window_reads_only_what_moved(uow: UnitOfWork) -> None:
    """Labels spread over 30 days; the window moves by a day: the update touches the items
    of the day that left and the day that entered, not the window's."""
    create_project(uow, "slide", CATEGORIES)
    project_id = find_project_id(uow, "slide")
    rows = _rows([(i, i % 5, i % 3, (i % 30) * DAY + 60) for i in range(300)])
    ingest_labels(uow, "slide", rows, received_at=T0 + timedelta(days=31))
    now = T0 + timedelta(days=20)
    first = update_kept(uow, project_id, span=_span(now))
    assert first.status == "rebuilt"
    moved = update_kept(uow, project_id, span=_span(now + timedelta(days=1)))
    # one day left (10 items), one day entered (10 items); the window holds 70
    assert (moved.status, moved.items) == ("updated", 20)
    _agrees(uow, project_id, _span(now + timedelta(days=1)))
