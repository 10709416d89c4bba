"""Hypothesis properties of the measures (issue 3 item 5)."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import compute_measures, kappa_s, tables
from auditor.stats.selfagreement import max_entropy_split
from tests.unit.stats.helpers import NO_CI, from_matrix, values

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def split_entropy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Entropy of (x, y_1..y_K) per row (0 log 0 = 0); x (G,), y (G, K) -> (G,)."""
    parts = np.column_stack([x, y])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(parts > 0, -parts * np.log(parts), 0.0)
    result: np.ndarray = terms.sum(axis=1)
    return result


@st.composite
def projects(draw: st.DrawFn, consistent: bool = False) -> LabelArrays:
    """Small projects with missing labels and repeated presentations; distinct order keys."""
    n_items = draw(st.integers(1, 10))
    n_raters = draw(st.integers(2, 5))
    k = draw(st.integers(2, 4))
    cells = draw(
        st.lists(st.integers(-1, k - 1), min_size=n_items * n_raters, max_size=n_items * n_raters)
    )
    mat = np.array(cells).reshape(n_items, n_raters)
    item, rater = np.nonzero(mat >= 0)
    category = mat[item, rater]
    repeats = draw(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, k - 1)), max_size=8))
    if item.size and repeats:
        pick = np.array([r[0] % item.size for r in repeats])
        again = np.array([r[1] for r in repeats])
        item = np.concatenate([item, item[pick]])
        rater = np.concatenate([rater, rater[pick]])
        category = np.concatenate([category, category[pick] if consistent else again])
    order = np.random.default_rng(draw(st.integers(0, 1000))).permutation(item.size)
    return dataclasses.replace(
        from_matrix(np.full((n_items, n_raters), -1), [f"c{c}" for c in range(k)]),
        item=item.astype(np.int64),
        rater=rater.astype(np.int64),
        category=category.astype(np.int64),
        order=order.astype(np.int64),
    )


def assert_same(a: dict[str, float | None], b: dict[str, float | None]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        if a[name] is None or b[name] is None:
            assert a[name] is None and b[name] is None, name
        else:
            assert abs(a[name] - b[name]) <= 1e-9, (name, a[name], b[name])


@SETTINGS
@given(projects(), st.randoms())
def test_invariant_under_permuting_raters(labels: LabelArrays, random) -> None:
    perm = np.array(random.sample(range(labels.n_raters), labels.n_raters))
    permuted = dataclasses.replace(labels, rater=perm[labels.rater])
    assert_same(values(compute_measures(labels, NO_CI)), values(compute_measures(permuted, NO_CI)))


@SETTINGS
@given(projects(), st.randoms())
def test_invariant_under_permuting_items_and_rows(labels: LabelArrays, random) -> None:
    n = labels.n_items
    perm = np.array(random.sample(range(n), n))
    rows = np.array(random.sample(range(labels.n_labels), labels.n_labels), dtype=np.int64)
    permuted = dataclasses.replace(
        labels,
        item=perm[labels.item][rows],
        rater=labels.rater[rows],
        category=labels.category[rows],
        order=labels.order[rows],
    )
    assert_same(values(compute_measures(labels, NO_CI)), values(compute_measures(permuted, NO_CI)))


@SETTINGS
@given(projects(), st.randoms())
def test_invariant_under_renaming_categories(labels: LabelArrays, random) -> None:
    k = labels.n_categories
    perm = np.array(random.sample(range(k), k))
    names = [""] * k
    for old, new in enumerate(perm):
        names[new] = labels.category_names[old]
    renamed = dataclasses.replace(
        labels, category=perm[labels.category], category_names=tuple(names)
    )
    assert_same(values(compute_measures(labels, NO_CI)), values(compute_measures(renamed, NO_CI)))


@SETTINGS
@given(
    st.lists(st.integers(0, 3), min_size=2, max_size=30).filter(lambda c: len(set(c)) >= 2),
    st.integers(2, 6),
)
def test_perfect_agreement_gives_one(truth: list[int], n_raters: int) -> None:
    mat = np.tile(np.array(truth)[:, None], (1, n_raters))
    ms = compute_measures(from_matrix(mat, ["a", "b", "c", "d"]), NO_CI)
    for name in ("observed_agreement", "kappa_s", "fleiss_kappa", "krippendorff_alpha"):
        assert abs(ms.measures[name].value - 1.0) < 1e-12, name
    for pair in ms.pairwise_cohen:
        assert abs(pair.kappa.value - 1.0) < 1e-12


@SETTINGS
@given(projects(consistent=True))
def test_rho_equals_observed_agreement_for_perfectly_self_consistent_raters(
    labels: LabelArrays,
) -> None:
    ms = compute_measures(labels, NO_CI)
    rho, observed = ms.measures["rho"].value, ms.measures["observed_agreement"].value
    human_categories = np.unique(labels.category)
    if rho is None or observed is None or human_categories.size < 2:
        return  # undefined, or one category in use (then x is not forced to 0)
    assert abs(rho - observed) < 1e-12


@SETTINGS
@given(
    st.lists(st.integers(0, 20), min_size=3, max_size=3).filter(lambda v: sum(v) > 0),
    st.lists(st.integers(0, 20), min_size=3, max_size=3).filter(lambda v: sum(v) > 0),
)
def test_rater_model_x_is_feasible_and_beats_a_fine_grid(
    counts: list[int], shares: list[int]
) -> None:
    d = np.array(counts, dtype=float)[None, :] / sum(counts)
    p = np.array(shares, dtype=float) / sum(shares)
    x, y = max_entropy_split(d, p)
    used = p > 0
    bound = float((d[0, used] / p[used]).min())
    assert -1e-15 <= x[0] <= bound + 1e-12
    assert (y >= 0).all() and abs(x[0] + y.sum() - 1.0) < 1e-9
    grid = np.linspace(0.0, bound, 2001)
    grid_y = np.clip(d - grid[:, None] * p, 0.0, None)
    assert split_entropy(x, y)[0] >= split_entropy(grid, grid_y).max() - 1e-9


@settings(max_examples=30, deadline=None)
@given(projects())
def test_kappa_s_jackknife_equals_refits(labels: LabelArrays) -> None:
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    assume(table.n_pairable >= 2)  # not `return`: a skipped example must not count as a pass
    closed = kappa_s.leave_one_out(table)
    for position, u in enumerate(table.items):
        keep = labels.item != u
        without = dataclasses.replace(
            labels,
            item=labels.item[keep],
            rater=labels.rater[keep],
            category=labels.category[keep],
            order=labels.order[keep],
        )
        refit = compute_measures(without, NO_CI).measures["kappa_s"].value
        if refit is None:
            assert np.isnan(closed[position])
        else:
            assert abs(closed[position] - refit) < 1e-9


@settings(max_examples=25, deadline=None)
@given(projects())
def test_jackknife_intervals_contain_their_estimate(labels: LabelArrays) -> None:
    ms = compute_measures(labels, ProjectSettings(interval_method=IntervalMethod.JACKKNIFE))
    for m in ms.measures.values():
        if m.value is not None and m.ci_low is not None:
            assert m.ci_low <= m.value <= m.ci_high
