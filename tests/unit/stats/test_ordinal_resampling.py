"""The closed-form resampling of the new measures equals refitting them: weighted kappa_S's
jackknife (dense and pair paths) and bootstrap, the bias index's jackknife, and the delete-one
values of every measure written on item totals."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import LabelArrays, Scale, Weights
from auditor.stats import chance, cohen, kappa, kappa_s, ordinal, reading, tables
from auditor.stats.synthetic import synthetic_project
from tests.unit.stats.helpers import from_matrix
from tests.unit.stats.test_peers_coefficients import random_panel


def _table(labels: LabelArrays) -> tables.GroupTable:
    return tables.group_table(tables.collapse(labels), labels.rater_is_model)


def _kappa_s_w(table: tables.GroupTable, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    bias = table.rater_bias()
    summed, _ = kappa.rater_sums(table, bias)
    observed = chance.observed_weighted_per_item(table.counts, table.m, w)
    expected = ordinal.chance_weighted_per_item(table, summed, bias, w)
    ao, ae = observed.mean(), expected.mean()
    return float((ao - ae) / (1 - ae)), observed, expected


def _without(mat: np.ndarray, pairable: np.ndarray, u: int, k: int) -> tables.GroupTable:
    keep = np.ones(mat.shape[0], dtype=bool)
    keep[pairable[u]] = False
    return _table(from_matrix(mat[keep], [str(c) for c in range(k)]))


@pytest.mark.parametrize("seed", [1, 4, 9])
@pytest.mark.parametrize("weights", list(Weights))
def test_weighted_kappa_s_jackknife_equals_refits(
    seed: int, weights: Weights, monkeypatch: pytest.MonkeyPatch
) -> None:
    mat, k = random_panel(seed, missing=0.3)
    table = _table(from_matrix(mat, [str(c) for c in range(k)]))
    w = chance.weight_matrix(k, Scale.ORDINAL, weights)
    _, observed, expected = _kappa_s_w(table, w)
    refits = np.array(
        [_kappa_s_w(_without(mat, table.items, u, k), w)[0] for u in range(table.n_pairable)]
    )
    for occupancy in (1 << 30, 0):  # the dense-block path, then the within-item pairs
        with monkeypatch.context() as patch:
            patch.setattr(kappa_s, "DENSE_OCCUPANCY", occupancy)
            closed = kappa_s.leave_one_out(table, observed, expected, w)
        assert np.allclose(closed, refits, rtol=0, atol=1e-12, equal_nan=True), occupancy


def test_weighted_kappa_s_jackknife_paths_agree_across_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    labels = synthetic_project(2000, 9, n_categories=5, missing=0.5, seed=3)
    table = _table(labels)
    w = chance.weight_matrix(5, Scale.ORDINAL, Weights.QUADRATIC)
    _, observed, expected = _kappa_s_w(table, w)
    monkeypatch.setattr(kappa_s, "DENSE_CHUNK_CELLS", 700)
    results = []
    for occupancy in (1 << 30, 0):
        monkeypatch.setattr(kappa_s, "DENSE_OCCUPANCY", occupancy)
        results.append(kappa_s.leave_one_out(table, observed, expected, w))
    assert np.isfinite(results[0]).all()
    assert np.allclose(results[0], results[1], rtol=0, atol=1e-12)


def test_weighted_kappa_s_bootstrap_with_unit_weights_is_the_estimate() -> None:
    mat, k = random_panel(5, missing=0.3)
    table = _table(from_matrix(mat, [str(c) for c in range(k)]))
    w = chance.weight_matrix(k, Scale.ORDINAL, Weights.LINEAR)
    value, observed, _ = _kappa_s_w(table, w)
    boot = kappa_s.Bootstrap(table, observed, w)
    assert boot.feasible
    replicate = boot.replicates(np.ones((2, table.n_pairable)))
    assert replicate == pytest.approx([value, value], abs=1e-12)
    # a resample is a weighted refit: integer weights = items repeated
    counts = np.random.default_rng(2).integers(0, 3, size=table.n_pairable)
    counts[0] = max(counts[0], 1)
    repeated = np.repeat(mat[table.items], counts, axis=0)
    expected = _kappa_s_w(_table(from_matrix(repeated, [str(c) for c in range(k)])), w)[0]
    assert boot.replicates(counts[None, :].astype(float))[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("columns", [64, 0])  # the one-hot blocks, then the pair walk
@pytest.mark.parametrize("seed", [2, 7, 10])
def test_bias_index_jackknife_equals_refits(
    seed: int, columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    mat, k = random_panel(seed, missing=0.3)
    table = _table(from_matrix(mat, [str(c) for c in range(k)]))
    pairs = cohen.pairwise_cohen(table)
    monkeypatch.setattr(reading, "DENSE_COLUMNS", columns)
    monkeypatch.setattr(reading, "DENSE_BLOCK_CELLS", 50)  # several blocks
    closed = reading.bias_index_leave_one_out(table, pairs.rater_a, pairs.rater_b, pairs.confusion)
    for u in range(table.n_pairable):
        refit = _without(mat, table.items, u, k)
        expected = reading.bias_index(cohen.pairwise_cohen(refit).confusion)
        assert closed[u] == pytest.approx(expected, abs=1e-12, nan_ok=True), u


@pytest.mark.parametrize("metric", [ordinal.ORDINAL, ordinal.INTERVAL])
def test_alpha_metric_jackknife_equals_refits(metric: str) -> None:
    mat, k = random_panel(11, missing=0.3)
    table = _table(from_matrix(mat, [str(c) for c in range(k)]))
    closed = ordinal.alpha_metric(table, metric).leave_one_out()
    for u in range(table.n_pairable):
        expected = ordinal.alpha_metric(_without(mat, table.items, u, k), metric).estimate()
        assert closed[u] == pytest.approx(expected, abs=1e-12), u


def test_ac1_jackknife_holds_the_single_label_items() -> None:
    # pi_c counts the items with a single label (Gwet); the jackknife leaves out pairable items
    mat, k = random_panel(8, missing=0.5)
    table = _table(from_matrix(mat, [str(c) for c in range(k)]))
    assert table.single_counts.sum() > 0
    identity = np.eye(k)
    observed = kappa.observed_per_item(table.counts, table.m)
    closed = chance.gwet(table, observed, identity).leave_one_out()
    for u in range(table.n_pairable):
        refit = _without(mat, table.items, u, k)  # its single-label items are the same
        ao = kappa.observed_per_item(refit.counts, refit.m)
        expected = chance.gwet(refit, ao, identity).estimate()
        assert closed[u] == pytest.approx(expected, abs=1e-12), u


@pytest.mark.parametrize("seed", [0, 3, 8])
def test_estimates_without_intervals_equal_those_with(seed: int) -> None:
    # without intervals the new measures are summed without per-item arrays (BLAS products of
    # the counts): the same numbers
    from auditor.domain import IntervalMethod, ProjectSettings
    from auditor.stats import compute_measures

    mat, k = random_panel(seed, missing=0.3)
    labels = from_matrix(mat, [str(c) for c in range(k)])
    plain = compute_measures(
        labels, ProjectSettings(interval_method=IntervalMethod.NONE), scale=Scale.ORDINAL
    )
    full = compute_measures(labels, ProjectSettings(), scale=Scale.ORDINAL)
    for name, m in plain.measures.items():
        assert m.value == pytest.approx(full.measures[name].value, abs=1e-12, nan_ok=True), name
    for name, per in plain.by_category.items():
        for category, m in per.items():
            other = full.by_category[name][category].value
            assert m.value == pytest.approx(other, abs=1e-12), (name, category)
