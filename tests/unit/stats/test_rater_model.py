"""The rater model against projects drawn from it with known x (docs/measures.md, "Version 2")."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import IntervalMethod, ProjectSettings, RaterModel, RhoMode
from auditor.stats import compute_measures
from tests.unit.stats.helpers import rater_model_project, true_rho

NO_CI = ProjectSettings(interval_method=IntervalMethod.NONE)
TRUE_X = (0.0, 0.1, 0.3, 0.6)
PREVALENCE = {
    (2, "uniform"): (0.5, 0.5),
    (2, "skewed"): (0.75, 0.25),
    (3, "uniform"): (1 / 3, 1 / 3, 1 / 3),
    (3, "skewed"): (0.6, 0.3, 0.1),
    (4, "uniform"): (0.25, 0.25, 0.25, 0.25),
    (4, "skewed"): (0.5, 0.25, 0.15, 0.1),
}


REPEATED = 0.25  # the design: two looks on a quarter of the (item, rater) cells
TOLERANCE = 0.06


def items_for(prevalence: tuple[float, ...], x: float = 0.6, se: float = TOLERANCE / 3.5) -> int:
    """Items that give x (the worst case, largest x of TRUE_X) a standard error of ``se``.

    Delta method with two looks: SA is a share over n_rep = REPEATED * items repeated items,
    se(SA) = sqrt(SA (1 - SA) / n_rep), SA = s + (1 - s) Y^2, and Y = sqrt((SA - s) / (1 - s))
    so se(x) = se(Y) = se(SA) / ((1 - s) 2 Y). With 4000 items, x = 0.6 has se 0.025 (K = 4)
    to 0.049 (K = 2, P = .75/.25): a 0.06 tolerance would miss often (5 of 20 seeds at
    K = 2, P = .75/.25). The noise of P (through s) adds a little, hence 3.5 standard errors.
    Six looks give less.
    """
    s = float(np.square(prevalence).sum())
    y = 1.0 - x
    sa = s + (1.0 - s) * y**2
    n_rep = sa * (1.0 - sa) / (se * (1.0 - s) * 2.0 * y) ** 2
    return max(4000, int(np.ceil(n_rep / REPEATED)))


@pytest.mark.parametrize("looks", [2, 6])
@pytest.mark.parametrize("shape", sorted(PREVALENCE))
def test_random_choice_and_rho_recover_the_truth(shape: tuple[int, str], looks: int) -> None:
    # enough items for a standard error of x of 0.017 at x = 0.6 (8800 to 32600 items): the
    # 0.06 tolerance is 3.5 standard errors, and it holds on several seeds
    n_items = items_for(PREVALENCE[shape])
    for seed in range(3):
        labels = rater_model_project(
            n_items, TRUE_X, PREVALENCE[shape], looks, REPEATED, seed=100 * shape[0] + seed
        )
        for mode in RhoMode:
            ms = compute_measures(
                labels, ProjectSettings(interval_method=IntervalMethod.NONE, rho_mode=mode)
            )
            for rater, truth in zip(ms.raters, TRUE_X, strict=True):
                x = rater.random_choice.value
                assert x == pytest.approx(truth, abs=TOLERANCE), (rater.rater, seed)
                assert rater.reliability.value == pytest.approx(1 - truth, abs=TOLERANCE)
            assert ms.measures["rho"].value == pytest.approx(true_rho(TRUE_X), abs=0.05), mode


def test_max_entropy_reads_no_random_choice_with_two_looks_and_three_categories() -> None:
    # the reason for version 2: the per-item solve is bounded by min d(c) / P(c) = 0 whenever
    # two looks miss a category in use, so x = 0 for every rater and rho equals Ao
    labels = rater_model_project(2000, TRUE_X, PREVALENCE[(3, "uniform")], 2, 0.25, seed=1)
    settings = ProjectSettings(
        interval_method=IntervalMethod.NONE, rater_model=RaterModel.MAX_ENTROPY
    )
    ms = compute_measures(labels, settings)
    assert all(r.random_choice.value == 0.0 for r in ms.raters)
    assert ms.measures["rho"].value == pytest.approx(ms.measures["observed_agreement"].value)


@pytest.mark.parametrize("looks", [2, 6])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_purely_random_raters_give_rho_and_kappa_near_zero(k: int, looks: int) -> None:
    labels = rater_model_project(3000, (1.0,) * 4, PREVALENCE[(k, "uniform")], looks, 0.25, 7)
    ms = compute_measures(labels, NO_CI)
    assert abs(ms.measures["kappa_s"].value) < 0.03
    assert ms.measures["rho"].value < 0.05
    for rater in ms.raters:
        # chance agreement of two looks: SA near s = 1/K, not the plug-in's 1/m + (1 - 1/m)/K
        assert rater.self_agreement.value == pytest.approx(1 / k, abs=0.05)
        assert rater.self_kappa.value == pytest.approx(0.0, abs=0.1)


def test_perfectly_consistent_raters_give_rho_equal_to_observed_agreement() -> None:
    # self-consistent raters who disagree with each other: each rater labels by its own rule
    rng = np.random.default_rng(3)
    base = rater_model_project(1500, (0.0,) * 3, (0.4, 0.3, 0.3), 2, 0.3, seed=3)
    shift = rng.integers(0, 3, size=(1500, 3))  # a fixed per-(item, rater) reading
    category = (base.category + shift[base.item, base.rater] * (base.rater > 0)) % 3
    labels = type(base)(**{**base.__dict__, "category": category})
    for mode in RhoMode:
        ms = compute_measures(
            labels, ProjectSettings(interval_method=IntervalMethod.NONE, rho_mode=mode)
        )
        assert all(r.self_agreement.value == 1.0 for r in ms.raters)
        assert all(r.random_choice.value == 0.0 for r in ms.raters)
        assert ms.measures["observed_agreement"].value < 0.6
        assert ms.measures["rho"].value == pytest.approx(
            ms.measures["observed_agreement"].value, abs=1e-12
        )


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
@pytest.mark.parametrize("model", list(RaterModel))
def test_rater_intervals_cover_their_estimates_and_the_truth_mostly(
    method: IntervalMethod, model: RaterModel
) -> None:
    labels = rater_model_project(1500, TRUE_X, PREVALENCE[(2, "uniform")], 6, 0.2, seed=5)
    settings = ProjectSettings(interval_method=method, rater_model=model, bootstrap_resamples=200)
    ms = compute_measures(labels, settings)
    covered = 0
    for rater, truth in zip(ms.raters, TRUE_X, strict=True):
        for m in (rater.self_agreement, rater.self_kappa, rater.reliability, rater.random_choice):
            assert m.ci_low is not None and m.ci_high is not None, (rater.rater, m)
            assert m.interval_method is method
            assert m.ci_low - 1e-12 <= m.value <= m.ci_high + 1e-12, (rater.rater, m)
            assert m.ci_low >= 0.0 or m is rater.self_kappa
        if model == RaterModel.MOMENTS:
            covered += rater.random_choice.ci_low <= truth <= rater.random_choice.ci_high
    if model == RaterModel.MOMENTS:
        assert covered >= 3  # 95% intervals: at most one miss of four by chance here


def test_a_single_category_in_use_leaves_the_rater_model_undefined() -> None:
    labels = rater_model_project(50, (0.0, 0.0), (1.0, 0.0), 2, 0.5, seed=0)
    ms = compute_measures(labels, ProjectSettings())
    assert ms.measures["observed_agreement"].value == 1.0
    assert ms.measures["rho"].value is None
    assert ms.measures["rho"].reason == "a single category in use"
    for rater in ms.raters:
        assert rater.self_agreement.value == 1.0
        for m in (rater.self_kappa, rater.reliability, rater.random_choice):
            assert m.value is None and m.reason == "a single category in use"
