"""Intervals of rho and of the R&R split re-estimate the raters' repeats in every resample.

Projects are drawn from the section 8 rater model (K = 3, P = .6/.3/.1, 3000 items, two looks
on 20% of the (item, rater) cells): the interval must cover the known truth about as often as
its level says. Holding each rater's Y fixed while resampling items gave half-widths of 0.004
against a spread of 0.024 across seeds, and covered the truth in 4 of 12 projects.
"""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import IntervalMethod, ProjectSettings, RhoMode, RhoUnrated
from auditor.stats import compute_measures, rho
from auditor.stats.selfagreement import fit, self_agreement
from auditor.stats.tables import collapse, group_table
from tests.unit.stats.helpers import rater_model_project, true_rho

SKEWED = (0.6, 0.3, 0.1)
GRADED = (0.0, 0.1, 0.3, 0.6)
WITH_RANDOM = (0.0, 0.1, 0.3, 0.6, 1.0)


def _rho_runs(x: tuple[float, ...], seeds: int, settings: ProjectSettings) -> np.ndarray:
    """(value, ci_low, ci_high) of rho over ``seeds`` projects, shape (seeds, 3)."""
    out = []
    for seed in range(seeds):
        labels = rater_model_project(3000, x, SKEWED, 2, 0.2, seed=seed)
        m = compute_measures(labels, settings).measures["rho"]
        assert m.ci_low is not None and m.ci_high is not None, m
        out.append((m.value, m.ci_low, m.ci_high))
    return np.asarray(out)


@pytest.mark.parametrize("mode", list(RhoMode))
def test_the_co_agreement_table_gives_back_rho(mode: RhoMode) -> None:
    # the resampling evaluates rho's item sum from the (K, R, R) table: at the full-sample
    # parameters it must be rho itself, by the bit-mask path (R <= 14) and the pair walk
    for n_raters in (5, 16):
        x = tuple(np.linspace(0.0, 0.8, n_raters))
        labels = rater_model_project(400, x, SKEWED, 2, 0.3, seed=n_raters)
        cells = collapse(labels)
        table = group_table(cells, labels.rater_is_model)
        prevalence = table.counts.sum(axis=0) / table.counts.sum()
        model = self_agreement(
            cells.repeat_counts,
            cells.rater[cells.repeat_cell],
            cells.item[cells.repeat_cell],
            n_raters,
        )
        y = fit(model, prevalence, ProjectSettings().rater_model).reliability
        rated = model.n_items > 0
        for unrated in RhoUnrated:
            result = rho.rho(table, y, rated, prevalence, mode, unrated)
            assert result.totals is not None
            pairs = rho.co_agreement(table, rated, unrated, 3)
            filled = rho.fill_unrated(y, rated, unrated)
            total = rho.evaluate(pairs, filled[None, :], prevalence[None, :], mode)[0]
            assert total / result.n_items == pytest.approx(result.totals.estimate(), abs=1e-12)


def test_jackknife_interval_of_rho_covers_the_truth() -> None:
    runs = _rho_runs(GRADED, 40, ProjectSettings())
    truth = true_rho(GRADED)
    covered = int(((runs[:, 1] <= truth) & (truth <= runs[:, 2])).sum())
    assert covered >= 34, covered  # 95% intervals: 38 expected; was 4 of 12 before
    half = (runs[:, 2] - runs[:, 1]).mean() / 2
    spread = runs[:, 0].std()
    assert 0.7 * 1.96 * spread < half < 1.6 * 1.96 * spread, (half, spread)


def test_bootstrap_interval_of_rho_covers_the_truth_with_a_random_rater() -> None:
    # a purely random rater (x = 1) reads Y > 0 half of the time (Y is the root of a clipped
    # noisy self-kappa): the estimate is biased up by ~0.015, the percentile interval still
    # covers the truth
    settings = ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP, bootstrap_resamples=100)
    runs = _rho_runs(WITH_RANDOM, 20, settings)
    truth = true_rho(WITH_RANDOM)
    covered = int(((runs[:, 1] <= truth) & (truth <= runs[:, 2])).sum())
    assert covered >= 17, covered


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
def test_interval_of_rho_reaches_zero_for_purely_random_raters(method: IntervalMethod) -> None:
    settings = ProjectSettings(interval_method=method, bootstrap_resamples=100)
    reach = 0
    for seed in range(12):
        labels = rater_model_project(3000, (1.0,) * 4, (1 / 3,) * 3, 2, 0.2, seed=seed)
        m = compute_measures(labels, settings).measures["rho"]
        assert m.ci_low is not None and m.ci_high is not None
        reach += m.ci_low == 0.0
    assert reach >= 10, reach  # was 2 of 20 (e.g. 0.0055 [0.0052, 0.0058])


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
def test_intervals_of_the_repeatability_split_match_its_spread(method: IntervalMethod) -> None:
    settings = ProjectSettings(interval_method=method, bootstrap_resamples=100)
    runs: dict[str, list[tuple[float, float, float]]] = {"repeatability": [], "rater_effect": []}
    for seed in range(12):
        labels = rater_model_project(3000, WITH_RANDOM, SKEWED, 2, 0.2, seed=seed)
        ms = compute_measures(labels, settings)
        for name, values in runs.items():
            m = ms.measures[name]
            assert m.ci_low is not None and m.ci_high is not None
            values.append((m.value, m.ci_low, m.ci_high))
    for name, values in runs.items():
        arr = np.asarray(values)
        spread, half = arr[:, 0].std(), (arr[:, 2] - arr[:, 1]).mean() / 2
        # held fixed, the raters' SA gave repeatability [v, v] (half-width 0)
        assert 0.7 * 1.96 * spread < half < 2.0 * 1.96 * spread, (name, half, spread)
        centre = arr[:, 0].mean()
        covered = int(((arr[:, 1] <= centre) & (centre <= arr[:, 2])).sum())
        assert covered >= 10, (name, covered)


@pytest.mark.parametrize("n_items", [300, 3000])
@pytest.mark.parametrize("x", [GRADED, WITH_RANDOM], ids=["graded", "with_random"])
def test_default_interval_of_rho_covers_the_truth_in_every_cell(
    n_items: int, x: tuple[float, ...]
) -> None:
    # issue 24 item 5: the default (jackknife) interval covers the truth at least 92% of the
    # time at 95% over 40 projects per cell. The delete-one jackknife linearised the clipped
    # root Y = sqrt(clip(self_kappa)) and covered 75% (300 items) and 80% (3000) with a random
    # rater; carried through the clip by simulation it covers 92-98% (benchmarks/rho_coverage.py
    # runs 100 projects per cell with the bootstrap beside it)
    runs = np.asarray(
        [_one(rater_model_project(n_items, x, SKEWED, 2, 0.2, seed=seed)) for seed in range(40)]
    )
    truth = true_rho(x)
    covered = int(((runs[:, 1] <= truth) & (truth <= runs[:, 2])).sum())
    assert covered >= 37, covered


def _one(labels: object) -> tuple[float, float, float]:
    m = compute_measures(labels, ProjectSettings()).measures["rho"]  # type: ignore[arg-type]
    assert m.value is not None and m.ci_low is not None and m.ci_high is not None, m
    return m.value, m.ci_low, m.ci_high
