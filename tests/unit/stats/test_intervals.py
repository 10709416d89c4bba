"""Intervals: closed-form jackknife equals refitting without each item; the bootstrap's
weighted replicates equal refitting on the resampled items; seeded runs are reproducible."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import DEFAULT_SEED, alpha, compute_measures, kappa, kappa_s, tables
from auditor.stats.export import measure_set_to_dict
from auditor.stats.synthetic import synthetic_project
from tests.unit.stats.helpers import NO_CI, from_matrix
from tests.unit.stats.test_peers import random_matrix


def table_of(labels: LabelArrays) -> tables.GroupTable:
    return tables.group_table(tables.collapse(labels), labels.rater_is_model)


def refit(mat: np.ndarray, k: int, name: str) -> float:
    value = compute_measures(from_matrix(mat, [str(c) for c in range(k)]), NO_CI)
    got = value.measures[name].value
    return np.nan if got is None else got


@pytest.mark.parametrize("seed", range(6))
def test_jackknife_equals_refits(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.35)
    mat = mat[:40]
    table = table_of(from_matrix(mat, [str(c) for c in range(k)]))
    pairable = table.items
    closed = {
        "kappa_s": kappa_s.leave_one_out(table),
        "fleiss_kappa": kappa.fleiss_kappa(table).leave_one_out(),
        "krippendorff_alpha": alpha.krippendorff_alpha(table).leave_one_out(),
        "observed_agreement": kappa.observed_agreement(table).leave_one_out(),
    }
    for name, loo in closed.items():
        refits = [refit(np.delete(mat, u, axis=0), k, name) for u in pairable]
        np.testing.assert_allclose(loo, refits, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_bootstrap_replicate_equals_refit_on_resampled_items(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.3)
    table = table_of(from_matrix(mat, [str(c) for c in range(k)]))
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(table.n_pairable, np.full(table.n_pairable, 1 / table.n_pairable))
    resampled = np.repeat(mat[table.items], weights, axis=0)
    w = weights[None, :].astype(float)
    boot = kappa_s.Bootstrap(table)
    assert boot.feasible
    assert boot.replicates(w)[0] == pytest.approx(refit(resampled, k, "kappa_s"), abs=1e-10)
    for name, totals in (
        ("fleiss_kappa", kappa.fleiss_kappa(table)),
        ("krippendorff_alpha", alpha.krippendorff_alpha(table)),
    ):
        assert totals.resampled(w)[0] == pytest.approx(refit(resampled, k, name), abs=1e-10)


def small_project() -> LabelArrays:
    return synthetic_project(
        150, 5, n_categories=2, repeat_share=0.3, presentations=4, n_models=1, seed=5
    )


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
def test_intervals_contain_their_estimate(method: IntervalMethod) -> None:
    ms = compute_measures(
        small_project(), ProjectSettings(interval_method=method, bootstrap_resamples=400)
    )
    measures = [m for name, m in ms.measures.items() if name != "bias_index"]
    measures += [m.s for m in ms.models] + [r.self_agreement for r in ms.raters]
    measures += [m for per in ms.by_category.values() for m in per.values()]
    for m in measures:
        assert m.value is not None
        assert m.interval_method is method
    # the bias index's interval is its exact jackknife whatever the method (as per-rater S)
    index = ms.measures["bias_index"]
    assert index.interval_method is IntervalMethod.JACKKNIFE
    assert index.ci_low is not None and index.ci_high is not None
    assert index.ci_low <= index.value <= index.ci_high
    for m in [index]:
        assert m.ci_low is not None and m.ci_high is not None, m
        assert m.ci_low <= m.value + 1e-12 and m.value <= m.ci_high + 1e-12, m


def test_seeded_bootstrap_is_reproducible_and_records_its_seed() -> None:
    labels = small_project()
    settings = ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP, bootstrap_resamples=200)
    first = compute_measures(labels, settings, seed=7)
    again = compute_measures(labels, settings, seed=7)
    other = compute_measures(labels, settings, seed=8)
    default = compute_measures(labels, settings)
    assert measure_set_to_dict(first) == measure_set_to_dict(again)
    assert measure_set_to_dict(first) != measure_set_to_dict(other)
    assert (first.seed, other.seed, default.seed) == (7, 8, DEFAULT_SEED)
    assert first.bootstrap_resamples == 200
    assert compute_measures(labels, ProjectSettings()).seed is None


def test_interval_level_widens_the_interval() -> None:
    labels = small_project()
    narrow = compute_measures(labels, ProjectSettings(interval_level=0.8))
    wide = compute_measures(labels, ProjectSettings(interval_level=0.99))
    for name in ("kappa_s", "fleiss_kappa", "krippendorff_alpha", "rho"):
        n, w = narrow.measures[name], wide.measures[name]
        assert w.ci_low < n.ci_low < n.ci_high < w.ci_high
        assert w.interval_level == 0.99


def test_jackknife_matches_textbook_standard_error_for_a_mean() -> None:
    """For a mean, the jackknife se is s / sqrt(n) (Efron and Tibshirani 1993, ch. 11)."""
    mat, k = random_matrix(3, missing=0.0)
    labels = from_matrix(mat, [str(c) for c in range(k)])
    ms = compute_measures(labels, ProjectSettings(interval_level=0.95))
    ao_u = kappa.observed_per_item(table_of(labels).counts, table_of(labels).m)
    se = ao_u.std(ddof=1) / np.sqrt(ao_u.shape[0])
    m = ms.measures["observed_agreement"]
    assert (m.ci_high - m.ci_low) / 2 == pytest.approx(1.959963984540054 * se, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_pairwise_cohen_jackknife_equals_refits(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.3)
    names = [f"r{i}" for i in range(mat.shape[1])]
    labels = from_matrix(mat, [str(c) for c in range(k)], names=names)
    ms = compute_measures(labels, ProjectSettings(interval_level=0.9))
    checked = 0
    for pair in ms.pairwise_cohen:
        a, b = names.index(pair.rater_a), names.index(pair.rater_b)
        shared = np.flatnonzero((mat[:, a] >= 0) & (mat[:, b] >= 0))
        refits = np.array(
            [cohen_kappa_score(mat[np.delete(shared, i), a], mat[np.delete(shared, i), b])
             for i in range(shared.shape[0])]
        )  # fmt: skip
        if pair.kappa.value is None or not np.isfinite(refits).all():
            continue
        n = refits.shape[0]
        se = np.sqrt((n - 1) / n * ((refits - refits.mean()) ** 2).sum())
        half = (pair.kappa.ci_high - pair.kappa.ci_low) / 2
        assert half == pytest.approx(1.6448536269514722 * se, rel=1e-9, abs=1e-12)
        assert pair.kappa.interval_method is IntervalMethod.JACKKNIFE
        checked += 1
    assert checked > 0


def test_pairwise_cohen_bootstrap_interval_contains_the_estimate() -> None:
    ms = compute_measures(
        small_project(), ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP), seed=3
    )
    for pair in ms.pairwise_cohen:
        assert pair.kappa.ci_low <= pair.kappa.value <= pair.kappa.ci_high


def test_column_quantile_matches_numpy() -> None:
    from auditor.stats.cohen import _column_quantile

    rng = np.random.default_rng(0)
    values = rng.normal(size=(50, 7))
    values[rng.random(values.shape) < 0.2] = np.nan
    ordered = np.sort(values, axis=0)
    count = np.isfinite(values).sum(axis=0)
    for q in (0.025, 0.5, 0.975):
        np.testing.assert_allclose(
            _column_quantile(ordered, count, q), np.nanquantile(values, q, axis=0), atol=1e-12
        )


@pytest.mark.parametrize("method", [IntervalMethod.JACKKNIFE, IntervalMethod.BOOTSTRAP])
def test_intervals_never_pass_one_and_shares_never_pass_zero(method: IntervalMethod) -> None:
    # Few, highly consistent repeats: the symmetric normal interval of a self-agreement near 1
    # would reach above 1 (QA found 0.833 [0.627, 1.040] on the bundled sample).
    labels = synthetic_project(
        40, 4, n_categories=3, repeat_share=0.2, presentations=2, reliability=0.97, seed=11
    )
    ms = compute_measures(labels, ProjectSettings(interval_method=method))
    group = list(ms.measures.values()) + [p.kappa for p in ms.pairwise_cohen]
    for m in group:  # 40 items: every group measure has its interval
        assert m.ci_low is not None and m.ci_high is not None, m
        assert m.ci_high <= 1.0, m
    # A rater's interval may be withheld (three perfect repeats say nothing about the spread);
    # those given stay in range, and the bounds are reached, not avoided: some self-agreement
    # below 1 has its interval cut at 1, some random-choice share above 0 has it cut at 0.
    cut_at_one = cut_at_zero = 0
    for rater in ms.raters:
        for m in (rater.self_agreement, rater.random_choice, rater.s_vs_group):
            assert m.ci_high is None or m.ci_high <= 1.0, m
        for share in (rater.self_agreement, rater.random_choice):
            assert share.ci_low is None or share.ci_low >= 0.0, share
        sa, rc = rater.self_agreement, rater.random_choice
        cut_at_one += sa.value is not None and sa.value < 1.0 and sa.ci_high == 1.0
        cut_at_zero += rc.value is not None and rc.value > 0.0 and rc.ci_low == 0.0
    assert cut_at_one >= 1 and cut_at_zero >= 1
