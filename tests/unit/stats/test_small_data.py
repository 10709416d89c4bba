"""Tiny projects: values and intervals stay inside what each measure can take, and undefined
measures give their true reason."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import compute_measures
from tests.unit.stats.helpers import from_matrix, from_rows


def _range(name: str, k: int) -> tuple[float, float]:
    """What each project measure can take (written out here, apart from the code)."""
    scale = k / (k - 1)
    return {
        "observed_agreement": (0.0, 1.0),
        "rho": (0.0, 1.0),
        "mean_self_agreement": (0.0, 1.0),
        "expected_agreement": (1.0 - scale, 1.0),  # 1 - K/(K-1) (1 - b), b in [0, 1]
        "repeatability": (0.0, scale),  # K/(K-1) (1 - a), a in [0, 1]
        "rater_effect": (-scale, scale),
    }.get(name, (-1.0, 1.0))  # the kappa-type coefficients


def _tiny_project(seed: int) -> tuple[LabelArrays, int]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    n_items, n_raters = int(rng.integers(2, 7)), int(rng.integers(2, 4))
    rows = [(u, r, int(rng.integers(k))) for u in range(n_items) for r in range(n_raters)]
    rows += [(u, r, int(rng.integers(k))) for u, r, _ in rows if rng.random() < 0.6]
    return from_rows(rows, n_raters, [f"c{c}" for c in range(k)]), k


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
def test_values_and_intervals_stay_in_range_on_tiny_projects(method: IntervalMethod) -> None:
    # was: expected agreement [-1.960, 1.000] and Fleiss' kappa [-1.409, ...] with K = 2
    settings = ProjectSettings(interval_method=method, bootstrap_resamples=100)
    for seed in range(60):
        labels, k = _tiny_project(seed)
        ms = compute_measures(labels, settings)
        for name, m in ms.measures.items():
            low, high = _range(name, k)
            if m.value is not None:
                assert low - 1e-12 <= m.value <= high + 1e-12, (seed, name, m)
            if m.ci_low is not None and m.ci_high is not None:
                assert low - 1e-12 <= m.ci_low <= m.ci_high <= high + 1e-12, (seed, name, m)


def test_repeatability_can_reach_k_over_k_minus_one() -> None:
    # two raters who never agree with themselves (a = 0): K/(K-1) (1 - 0) = 2 for K = 2
    rows = [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 0), (0, 0, 1), (1, 1, 1)]
    ms = compute_measures(from_rows(rows, 2, ["a", "b"]), ProjectSettings())
    assert ms.measures["repeatability"].value == pytest.approx(2.0)


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
def test_no_zero_width_interval_from_two_items(method: IntervalMethod) -> None:
    # two identical items: every resample reads the same value; [v, v] says nothing
    rows = [(0, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0), (1, 1, 0), (1, 0, 1), (0, 1, 1)]
    rows += [(1, 1, 1)]
    ms = compute_measures(from_rows(rows, 2, ["a", "b"]), ProjectSettings(interval_method=method))
    measures = list(ms.measures.values())
    for rater in ms.raters:
        measures += [rater.self_agreement, rater.self_kappa, rater.reliability]
    for m in measures:
        if m.value is None:
            continue
        if m.ci_low is None:
            assert m.ci_reason, m
        else:
            assert m.ci_high - m.ci_low > 1e-12, m


def test_repeats_without_a_pairable_item_give_the_true_reasons() -> None:
    # rater 0 labels item 0 as x then y; rater 1 labels item 1 as x twice: two categories are
    # in use among the looks, and no item has two raters
    rows = [(0, 0, 0), (0, 0, 1), (1, 1, 0), (1, 1, 0)]
    ms = compute_measures(from_rows(rows, 2, ["x", "y"]), ProjectSettings())
    assert ms.measures["rho"].value is None
    assert ms.measures["rho"].reason == "no item labeled by two raters"
    s = 0.75**2 + 0.25**2  # P from every look: x, y, x, x
    first, second = ms.raters
    assert first.self_kappa.value == pytest.approx((0.0 - s) / (1 - s))
    assert second.self_kappa.value == pytest.approx(1.0)
    for rater in ms.raters:
        for m in (rater.self_kappa, rater.reliability, rater.random_choice):
            assert m.value is not None, (rater.rater, m)
    assert first.reliability.value == 0.0 and first.random_choice.value == 1.0
    assert second.reliability.value == 1.0 and second.random_choice.value == 0.0


def test_one_category_among_every_look_is_still_a_single_category() -> None:
    rows = [(0, 0, 0), (0, 0, 0), (1, 1, 0), (1, 1, 0)]
    ms = compute_measures(from_rows(rows, 2, ["x", "y"]), ProjectSettings())
    assert ms.measures["rho"].reason == "no item labeled by two raters"
    for rater in ms.raters:
        assert rater.self_kappa.reason == "a single category in use"


def test_s_vs_group_with_one_category_in_use_says_so() -> None:
    ms = compute_measures(
        from_matrix([[1, 1, 1], [1, 1, 1], [1, 1, -1]], ["a", "b"]), ProjectSettings()
    )
    for rater in ms.raters:
        assert rater.s_vs_group.value is None
        assert rater.s_vs_group.reason == "a single category in use"


def test_no_zero_width_cohen_interval_from_three_shared_items() -> None:
    matrix = [[0, 0], [1, 1], [0, 0]]
    settings = ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP)
    kappa = compute_measures(from_matrix(matrix, ["a", "b"]), settings).pairwise_cohen[0].kappa
    assert kappa.value == 1.0
    assert kappa.ci_low is None and kappa.ci_reason  # was [1.0, 1.0]


@pytest.mark.parametrize("method", list(IntervalMethod))
@pytest.mark.parametrize("n_raters", [0, 2])
def test_a_scope_with_no_label_is_undefined_not_an_error(
    method: IntervalMethod, n_raters: int
) -> None:
    """An empty window (no label yet, or none in the last days): every measure null."""
    empty = np.zeros(0, dtype=np.int64)
    labels = LabelArrays(
        item=empty,
        rater=empty,
        category=empty,
        order=empty,
        rater_is_model=np.zeros(n_raters, dtype=bool),
        category_names=("a", "b", "c"),
    )
    ms = compute_measures(labels, ProjectSettings(interval_method=method))
    assert all(m.value is None and m.reason for m in ms.measures.values())
    assert len(ms.pairwise_cohen) == 0
