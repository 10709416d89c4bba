"""Kept statistics in the service (issue 22 item 3): random ingests, repeats (a rater's new
look at an item), out-of-order times and import reverts; after each step the incremental
state equals a rebuild from the labels to 1e-9, and its estimates equal the full computation.
On SQLite and PostgreSQL (the ``uow`` fixture's backends)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.domain import IntervalMethod
from auditor.services.ingest.imports import list_imports, revert_import
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.kept import Layout, state_of, update_kept
from auditor.services.recompute.kept_verify import in_id_order, kept_estimates, verify_kept
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.stats import compute_measures
from auditor.stats.kept import KEPT_MEASURES
from auditor.stats.kept_measures import kept_measure_set
from auditor.storage.label_loader import load_project_labels
from auditor.storage.unit_of_work import UnitOfWork
from tests.unit.stats.test_kept_measures import assert_equal_where_kept

T0 = datetime(2025, 3, 1, tzinfo=UTC)
CATEGORIES = ["a", "b", "c"]
_slugs = itertools.count()
_ticks = itertools.count()  # a distinct microsecond per label: no identity conflicts

label_rows = st.lists(
    st.tuples(
        st.integers(0, 7),  # item
        st.integers(0, 4),  # rater
        st.integers(0, 2),  # category
        st.integers(0, 10_000),  # seconds after T0 (out of order, ties allowed)
    ),
    min_size=1,
    max_size=25,
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("ingest"), label_rows),
        st.tuples(st.just("revert"), st.integers(0, 10)),
    ),
    min_size=1,
    max_size=6,
)


def _rows(drawn: list[tuple[int, int, int, int]], model_rater: bool) -> list[dict]:
    return [
        {
            "item": f"i{item}",
            "rater": "m" if model_rater and rater == 4 else f"r{rater}",
            "rater_kind": "model" if model_rater and rater == 4 else "human",
            "label": CATEGORIES[category],
            "labeled_at": T0 + timedelta(seconds=seconds, microseconds=next(_ticks) % 10**6),
        }
        for item, rater, category, seconds in drawn
    ]


def _full(uow: UnitOfWork, project_id: int) -> dict[str, float | None]:
    loaded = load_project_labels(uow.root_engine, project_id)
    if loaded.count == 0:
        return {}
    with uow:
        project = uow.projects.by_id(project_id)
        assert project is not None
        chosen = project.settings
    import dataclasses

    chosen = dataclasses.replace(chosen, interval_method=IntervalMethod.NONE)
    result = compute_measures(loaded.labels, chosen)
    # rho: kept under the default settings (moments, pool)
    return {name: result.measures[name].value for name in (*KEPT_MEASURES, "rho")}


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=steps,
    collapse=st.sampled_from(["first", "latest", "mode"]),
    model=st.booleans(),
    scale=st.sampled_from(["nominal", "ordinal"]),
)
def test_incremental_state_equals_a_rebuild_after_every_step(
    uow: UnitOfWork, steps: list, collapse: str, model: bool, scale: str
) -> None:
    slug = f"k{next(_slugs)}"
    create_project(uow, slug, CATEGORIES, collapse=collapse, scale=scale)
    project_id = find_project_id(uow, slug)
    for kind, argument in steps:
        if kind == "ingest":
            rows = _rows(argument, model)
            ingest_labels(uow, slug, rows, received_at=T0 + timedelta(days=1))
        else:
            imports = [r for r in list_imports(uow, slug) if r.reverted_at is None]
            if not imports:
                continue
            revert_import(uow, slug, imports[argument % len(imports)].id)
        update_kept(uow, project_id)
        verified = verify_kept(uow, project_id, store=False)
        assert verified.agrees, (verified.largest_difference, verified.estimates)
        full = _full(uow, project_id)
        ours = {name: e.value for name, e in kept_estimates(uow, project_id).items()}
        for name, value in full.items():
            mine = ours.get(name)
            if value is None or mine is None:
                assert value is None and mine is None, (name, value, mine)
            else:
                assert abs(value - mine) <= 1e-9, (name, value, mine)
        _measure_set_equals_the_full_computation(uow, project_id)


def _measure_set_equals_the_full_computation(uow: UnitOfWork, project_id: int) -> None:
    """``kept_measure_set`` of the stored state (raters in id order, as the full load numbers
    them) equals ``compute_measures`` wherever it does not say "missing"."""
    loaded = load_project_labels(uow.root_engine, project_id)
    if loaded.count == 0:
        return
    with uow:
        record = uow.kept.load(project_id)
        project = uow.projects.by_id(project_id)
    assert record is not None and project is not None
    layout = Layout.parse(record.signature)
    assert layout is not None
    state, _ = in_id_order(state_of(record, layout), layout)
    chosen = project.settings
    kept = kept_measure_set(
        state,
        rater_names=loaded.labels.rater_names,
        is_model=loaded.labels.rater_is_model,
        categories=loaded.labels.category_names,
        settings=chosen,
        n_labels=loaded.count,
        n_items=loaded.labels.n_items,
    )
    assert_equal_where_kept(kept, compute_measures(loaded.labels, chosen))


def test_the_recompute_keeps_the_statistics(uow: UnitOfWork) -> None:
    """A recompute folds the new labels in: the next update finds nothing to do."""
    create_project(uow, "r", CATEGORIES)
    project_id = find_project_id(uow, "r")
    rows = _rows([(i % 5, i % 3, i % 2, i) for i in range(30)], False)
    ingest_labels(uow, "r", rows, received_at=T0 + timedelta(days=1))
    recompute_project(uow, project_id, now=T0 + timedelta(days=1))
    assert update_kept(uow, project_id).status == "unchanged"
    ingest_labels(uow, "r", _rows([(0, 4, 1, 50)], False), received_at=T0 + timedelta(days=1))
    result = update_kept(uow, project_id)
    assert (result.status, result.new_labels, result.items) == ("updated", 1, 1)
    assert verify_kept(uow, project_id).agrees


def test_a_big_batch_since_the_watermark_rebuilds(uow: UnitOfWork, monkeypatch) -> None:
    """More new labels than the threshold (lowered here) and a quarter of those kept: one
    columnar rebuild instead of row reads by item; the state still agrees with the labels."""
    import auditor.services.recompute.kept as kept_service

    monkeypatch.setattr(kept_service, "MIN_REBUILD_LABELS", 5)
    create_project(uow, "big", CATEGORIES)
    project_id = find_project_id(uow, "big")
    ingest_labels(uow, "big", _rows([(i % 6, i % 4, i % 3, i) for i in range(40)], False))
    assert update_kept(uow, project_id).status == "rebuilt"  # no state yet
    ingest_labels(uow, "big", _rows([(0, 1, 2, 99)], False))
    assert update_kept(uow, project_id).status == "updated"  # 1 <= max(5, 40 // 4)
    more = _rows([(6 + i % 5, i % 4, i % 3, 200 + i) for i in range(20)], False)
    ingest_labels(uow, "big", more)
    result = update_kept(uow, project_id)
    assert result.status == "rebuilt" and "since the watermark" in result.reason
    assert verify_kept(uow, project_id, store=False).agrees
