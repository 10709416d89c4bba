"""AC1/AC2, Brennan-Prediger and the weighted coefficients against their peers, to 1e-9
(docs/measures.md, "Other chance models" and "Ordinal scales").

Random data with missing labels, categories declared but unused, items with a single label and
K = 2..7. irrCAC is called as MEASURES.md section 13 says: a raters-wide table of the category
index plus one, NaN where a rater did not label, ``categories`` the full declared list and
``digits=15`` (it rounds to 5 decimals by default).
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC
from sklearn.metrics import cohen_kappa_score

from auditor.domain import Scale, Weights
from auditor.stats import compute_measures
from tests.unit.stats.helpers import NO_CI, from_matrix

SEEDS = range(12)
WEIGHTS = (Weights.LINEAR, Weights.QUADRATIC)


def random_panel(seed: int, missing: float) -> tuple[np.ndarray, int]:
    """Items x raters of category indices (-1: missing). Grades near a true grade, so the
    weighted coefficients have something to weigh; the top category is declared but unused in
    a third of the panels; with missing labels some items keep a single label."""
    rng = np.random.default_rng(seed)
    k = int(2 + seed % 6)  # K = 2..7
    n_items, n_raters = int(rng.integers(30, 150)), int(rng.integers(2, 7))
    used = k - 1 if seed % 3 == 0 and k > 2 else k
    truth = rng.integers(0, used, size=n_items)
    step = rng.integers(-1, 2, size=(n_items, n_raters))
    noisy = rng.random((n_items, n_raters)) < rng.uniform(0.2, 0.7, size=n_raters)
    mat = np.clip(truth[:, None] + np.where(noisy, step, 0), 0, used - 1)
    if missing:
        mat[rng.random(mat.shape) < missing] = -1
        mat[mat.max(axis=1) < 0, 0] = int(truth[0])  # every item keeps a label
    return mat, k


def project(mat: np.ndarray, k: int, weights: Weights = Weights.QUADRATIC) -> object:
    names = [f"r{i}" for i in range(mat.shape[1])]
    labels = from_matrix(mat, [f"g{c}" for c in range(k)], names=names)
    return compute_measures(labels, NO_CI, scale=Scale.ORDINAL, weights=weights)


def peer(mat: np.ndarray, k: int, weights: str) -> CAC:
    frame = pd.DataFrame(np.where(mat >= 0, mat + 1.0, np.nan))
    return CAC(frame, weights=weights, categories=list(range(1, k + 1)), digits=15)


def coefficient(result: dict) -> float:
    return float(result["est"]["coefficient_value"])


@pytest.mark.parametrize("seed", SEEDS)
def test_ac1_and_bp_equal_irrcac_with_missing_labels(seed: int) -> None:
    mat, k = random_panel(seed, missing=0.3)
    ms = project(mat, k)
    theirs = peer(mat, k, "identity")
    assert ms.measures["ac1"].value == pytest.approx(coefficient(theirs.gwet()), abs=1e-9)
    assert ms.measures["bp"].value == pytest.approx(coefficient(theirs.bp()), abs=1e-9)


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("seed", SEEDS)
def test_ac2_and_bp_w_equal_irrcac_with_missing_labels(seed: int, weights: Weights) -> None:
    mat, k = random_panel(seed, missing=0.3)
    ms = project(mat, k, weights)
    theirs = peer(mat, k, weights.value)
    assert ms.measures["ac2"].value == pytest.approx(coefficient(theirs.gwet()), abs=1e-9)
    assert ms.measures["bp_w"].value == pytest.approx(coefficient(theirs.bp()), abs=1e-9)


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_kappa_s_and_fleiss_equal_irrcac_on_complete_data(
    seed: int, weights: Weights
) -> None:
    mat, k = random_panel(seed, missing=0.0)
    ms = project(mat, k, weights)
    theirs = peer(mat, k, weights.value)
    for ours, expected in (("kappa_s_w", theirs.conger()), ("fleiss_kappa_w", theirs.fleiss())):
        value = ms.measures[ours].value
        if value is None:  # a single category in use: irrCAC divides 0 by 0
            assert not np.isfinite(coefficient(expected)), ours
            continue
        assert value == pytest.approx(coefficient(expected), abs=1e-9), ours


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("seed", SEEDS)
def test_cohen_w_equals_sklearn_with_missing_labels(seed: int, weights: Weights) -> None:
    mat, k = random_panel(seed, missing=0.3)
    ms = project(mat, k, weights)
    names = [f"r{i}" for i in range(mat.shape[1])]
    checked = 0
    for pair in ms.pairwise_cohen:
        assert pair.cohen_w is not None
        a, b = names.index(pair.rater_a), names.index(pair.rater_b)
        shared = (mat[:, a] >= 0) & (mat[:, b] >= 0)
        if pair.cohen_w.value is None:
            continue
        expected = cohen_kappa_score(
            mat[shared, a], mat[shared, b], labels=list(range(k)), weights=weights.value
        )
        assert pair.cohen_w.value == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked


@pytest.mark.parametrize("seed", SEEDS)
def test_ordinal_and_interval_alpha_equal_krippendorff(seed: int) -> None:
    mat, k = random_panel(seed, missing=0.3)
    ms = project(mat, k)
    data = np.where(mat >= 0, mat, np.nan).T.astype(float)
    for ours, level in (("alpha_ordinal", "ordinal"), ("alpha_interval", "interval")):
        expected = krippendorff.alpha(
            reliability_data=data, level_of_measurement=level, value_domain=list(range(k))
        )
        assert ms.measures[ours].value == pytest.approx(expected, abs=1e-9), ours


def test_identity_weights_give_back_the_nominal_coefficients() -> None:
    # MEASURES.md section 14: identity weights give back sections 1-3 and 13 exactly; with
    # K = 2 linear and quadratic weights are the identity
    mat, k = random_panel(6, missing=0.3)
    assert k == 2
    ms = project(mat, k)
    for weighted, nominal in (
        ("kappa_s_w", "kappa_s"),
        ("fleiss_kappa_w", "fleiss_kappa"),
        ("ac2", "ac1"),
        ("bp_w", "bp"),
        ("alpha_ordinal", "krippendorff_alpha"),
        ("alpha_interval", "krippendorff_alpha"),
    ):
        assert ms.measures[weighted].value == pytest.approx(
            ms.measures[nominal].value, abs=1e-12
        ), weighted
    assert ms.measures["bp"].value == pytest.approx(
        ms.measures["expected_agreement"].value, abs=1e-12
    )
