"""Cross-checks against peer libraries on random data (test-only dependencies), to 1e-9."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from auditor.stats import cohen, compute_measures, reading, tables
from tests.unit.stats.helpers import NO_CI, from_matrix

SEEDS = range(8)


def random_matrix(seed: int, missing: float) -> tuple[np.ndarray, int]:
    """Items x raters with correlated labels and a share of -1 (missing)."""
    rng = np.random.default_rng(seed)
    n_items, n_raters, k = rng.integers(20, 120), rng.integers(2, 7), rng.integers(2, 6)
    truth = rng.integers(0, k, size=n_items)
    noise = rng.integers(0, k, size=(n_items, n_raters))
    keep_truth = rng.random((n_items, n_raters)) < rng.uniform(0.2, 0.9, size=n_raters)
    mat = np.where(keep_truth, truth[:, None], noise)
    mat[rng.random(mat.shape) < missing] = -1
    return mat, int(k)


@pytest.mark.parametrize("seed", SEEDS)
def test_alpha_equals_krippendorff_with_missing(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.3)
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)]), NO_CI)
    data = np.where(mat >= 0, mat, np.nan).T.astype(float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert ms.measures["krippendorff_alpha"].value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_equals_statsmodels_on_complete_data(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.0)
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)]), NO_CI)
    table, _ = aggregate_raters(mat, n_cat=k)
    expected = fleiss_kappa(table, method="fleiss")
    assert ms.measures["fleiss_kappa"].value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_pairwise_cohen_equals_sklearn_with_missing(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.3)
    names = [f"r{i}" for i in range(mat.shape[1])]
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)], names=names), NO_CI)
    checked = 0
    for pair in ms.pairwise_cohen:
        a, b = names.index(pair.rater_a), names.index(pair.rater_b)
        shared = (mat[:, a] >= 0) & (mat[:, b] >= 0)
        assert pair.n_items == shared.sum()
        if len(set(mat[shared, a]) | set(mat[shared, b])) < 2:
            assert pair.kappa.value is None and pair.kappa.reason
            continue
        expected = cohen_kappa_score(mat[shared, a], mat[shared, b])
        assert pair.kappa.value == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_kappa_s_equals_cohen_for_two_raters(seed: int) -> None:
    """Shah (2011): kappa_S reduces to Cohen's kappa for two raters."""
    mat, k = random_matrix(seed, missing=0.0)
    mat = mat[:, :2]
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)]), NO_CI)
    expected = cohen_kappa_score(mat[:, 0], mat[:, 1])
    assert ms.measures["kappa_s"].value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_kappa_s_equals_cohen_for_two_raters_with_missing(seed: int) -> None:
    """With missing labels, items only one of the two rated are not pairable."""
    mat, k = random_matrix(seed, missing=0.3)
    mat = mat[:, :2]
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)]), NO_CI)
    shared = (mat >= 0).all(axis=1)
    expected = cohen_kappa_score(mat[shared, 0], mat[shared, 1])
    assert ms.measures["kappa_s"].value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_both_ways_of_counting_rater_pairs_agree(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.5)
    labels = from_matrix(mat, [str(c) for c in range(k)])
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    by_items = cohen.pairwise_cohen(table, by_rater_pairs=True)
    by_labels = cohen.pairwise_cohen(table, by_rater_pairs=False)
    for name in ("rater_a", "rater_b", "n_items", "kappa"):
        np.testing.assert_array_equal(getattr(by_items, name), getattr(by_labels, name))


@pytest.mark.parametrize("seed", SEEDS)
def test_gram_tally_equals_the_bincount_per_rater_pair(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    mat, k = random_matrix(seed, missing=0.4)
    labels = from_matrix(mat, [str(c) for c in range(k)])
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    monkeypatch.setattr(cohen, "GRAM_BLOCK_CELLS", 7 * mat.shape[1] * k)  # several blocks
    tally, carried = cohen._tally_by_gram(table, reading.confusion_carry(table))
    np.testing.assert_array_equal(tally, cohen._tally_by_rater_pairs(table))
    # the raters' confusion summed in the same pass equals its bincount path
    assert np.allclose(
        reading.rater_confusion(table, carried), reading.rater_confusion(table), atol=1e-12
    )
