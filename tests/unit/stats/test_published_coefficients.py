"""Published values of the new coefficients, with their sources, and the known-truth checks of
the ordinal measures (docs/measures.md, "Other chance models", "Ordinal scales", "Reading a
coefficient")."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import Scale, Weights
from auditor.stats import compute_measures, paradox
from auditor.stats.export import measure_set_to_dict
from tests.unit.stats.helpers import NO_CI, from_matrix

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120: 4 raters, 12 subjects,
# 5 categories, missing ratings (irrCAC's cac.raw4raters); -1 is a missing rating.
GWET_4_RATERS = [
    [1, 1, -1, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [-1, 5, 5, 5],
    [-1, -1, 1, 1],
    [-1, -1, 3, -1],
]


def _gwet_4_raters(weights: Weights = Weights.QUADRATIC) -> object:
    mat = np.asarray(GWET_4_RATERS)
    mat = np.where(mat > 0, mat - 1, -1)
    return compute_measures(
        from_matrix(mat, ["1", "2", "3", "4", "5"]), NO_CI, scale=Scale.ORDINAL, weights=weights
    )


def test_gwet_handbook_four_raters_unweighted() -> None:
    # Handbook p. 120 (also printed by R irrCAC's vignette): percent agreement 0.8181818,
    # AC1 0.7754441, Krippendorff's alpha 0.7434211; Brennan-Prediger (0.8181818 - 1/5)/(4/5)
    ms = _gwet_4_raters()
    assert ms.measures["observed_agreement"].value == pytest.approx(0.8181818, abs=5e-8)
    assert ms.measures["ac1"].value == pytest.approx(0.7754441, abs=5e-8)
    assert ms.measures["krippendorff_alpha"].value == pytest.approx(0.7434211, abs=5e-8)
    assert ms.measures["bp"].value == pytest.approx(0.7727273, abs=5e-8)


def test_gwet_handbook_four_raters_quadratic_weights() -> None:
    # the same example, quadratic weights: weighted percent agreement 0.9753788, AC2 0.9140007,
    # Krippendorff's alpha (quadratic = the interval metric on the grades) 0.8491071
    ms = _gwet_4_raters(Weights.QUADRATIC)
    assert ms.measures["ac2"].value == pytest.approx(0.9140007, abs=5e-8)
    assert ms.measures["alpha_interval"].value == pytest.approx(0.8491071, abs=5e-8)
    assert ms.measures["bp_w"].value == pytest.approx((0.9753788 - 0.75) / 0.25, abs=5e-7)


def _two_raters(table: list[list[int]], names: tuple[str, ...]) -> np.ndarray:
    """Items x 2 raters from a K x K contingency table (rows: rater 1, columns: rater 2)."""
    rows = [
        (a, b) for a, line in enumerate(table) for b, count in enumerate(line) for _ in range(count)
    ]
    del names
    return np.asarray(rows, dtype=np.int64)


def test_gwet_vignette_three_categories_two_raters() -> None:
    # Gwet's irrCAC vignette (cont3x3abstractors, 100 subjects): Cohen 0.7964094, AC1 0.8493305,
    # Brennan-Prediger 0.835, Krippendorff's alpha 0.7972585, percent agreement 0.89
    mat = _two_raters([[13, 0, 0], [0, 20, 7], [0, 4, 56]], ("Ectopic", "AIU", "NIU"))
    ms = compute_measures(from_matrix(mat, ["Ectopic", "AIU", "NIU"]), NO_CI)
    assert ms.measures["observed_agreement"].value == pytest.approx(0.89, abs=1e-12)
    assert ms.measures["kappa_s"].value == pytest.approx(0.7964094, abs=5e-8)
    assert ms.measures["ac1"].value == pytest.approx(0.8493305, abs=5e-8)
    assert ms.measures["bp"].value == pytest.approx(0.835, abs=1e-12)
    assert ms.measures["krippendorff_alpha"].value == pytest.approx(0.7972585, abs=5e-8)


def _byrt(a: int, b: int, c: int, d: int) -> dict:
    """Byrt, Bishop and Carlin (1993): a both yes, b and c the disagreements, d both no."""
    mat = _two_raters([[a, b], [c, d]], ("yes", "no"))
    return measure_set_to_dict(compute_measures(from_matrix(mat, ["yes", "no"]), NO_CI))


def _v(doc: dict, name: str) -> float:
    return doc["measures"][name]["value"]


def test_byrt_bishop_carlin_tables() -> None:
    doc = _byrt(40, 9, 6, 45)
    assert (_v(doc, "observed_agreement"), _v(doc, "bp")) == pytest.approx((0.85, 0.70))
    assert _v(doc, "kappa_s") == pytest.approx(0.6995, abs=5e-5)
    assert paradox.find(doc) is None
    doc = _byrt(80, 10, 5, 5)
    assert _v(doc, "bp") == pytest.approx(0.70)
    assert _v(doc, "kappa_s") == pytest.approx(0.3182, abs=5e-5)
    assert _v(doc, "ac1") == pytest.approx(0.808, abs=5e-4)
    assert _v(doc, "prevalence_index") == pytest.approx(0.75)
    assert _v(doc, "bias_index") == pytest.approx(0.05)
    found = paradox.find(doc)
    assert found is not None and (found.dominant, found.rare) == ("yes", "no")
    # ps_no = 2 * 5 / (2 * 5 + 10 + 5) = 0.4; ps_yes = 160 / 175
    assert doc["measures"]["specific_agreement"]["no"]["value"] == pytest.approx(0.4)
    assert doc["measures"]["specific_agreement"]["yes"]["value"] == pytest.approx(160 / 175)
    assert found.sentence().startswith(
        "Raters agree on 85% of items, mostly on 'yes' (88% of labels); "
        "on 'no' they agree 40% of the time."
    )
    for cells, kappa, bias in (((45, 15, 25, 15), 0.1304, 0.10), ((25, 35, 5, 35), 0.2593, 0.30)):
        doc = _byrt(*cells)
        assert _v(doc, "bp") == pytest.approx(0.20)
        assert _v(doc, "kappa_s") == pytest.approx(kappa, abs=5e-5)
        assert _v(doc, "bias_index") == pytest.approx(bias)


def test_paradox_needs_both_a_dominant_category_and_a_gap() -> None:
    # Ao 0.78, two categories used equally: a rule on Ae alone would fire; this one does not
    assert paradox.find(_byrt(39, 11, 11, 39)) is None
    # a dominant category with kappa close to Ao: no paradox
    assert paradox.find(_byrt(90, 0, 0, 10)) is None


def _panel(rng: np.random.Generator, n_items: int, k: int, error: str) -> np.ndarray:
    """4 raters grading n_items on K grades; each grade is wrong with chance 0.3, by one grade
    ("adjacent") or to the far end of the scale ("gross")."""
    truth = rng.integers(0, k, size=n_items)
    grades = np.repeat(truth[:, None], 4, axis=1)
    wrong = rng.random(grades.shape) < 0.3
    if error == "adjacent":
        step = np.where(rng.random(grades.shape) < 0.5, -1, 1)
        moved = np.clip(grades + step, 0, k - 1)
        moved = np.where(moved == grades, grades - step, moved)  # at an end: the other side
    else:  # to the far end of the scale: at least half the scale away
        moved = np.where(grades >= (k - 1) / 2, 0, k - 1)
    return np.where(wrong, moved, grades)


def test_weighted_coefficients_tell_near_misses_from_gross_errors() -> None:
    # MEASURES.md section 14 known truth: the nominal coefficients cannot tell the panels apart
    # (the same share of exact agreement), the weighted ones must
    rng = np.random.default_rng(24)
    k = 5
    names = [str(g) for g in range(1, k + 1)]
    read = {}
    for error in ("adjacent", "gross"):
        mat = _panel(rng, 2000, k, error)
        read[error] = compute_measures(from_matrix(mat, names), NO_CI, scale=Scale.ORDINAL)
    near, gross = read["adjacent"].measures, read["gross"].measures
    assert abs(near["kappa_s"].value - gross["kappa_s"].value) < 0.05
    for name in ("kappa_s_w", "fleiss_kappa_w", "ac2", "bp_w", "alpha_ordinal", "alpha_interval"):
        assert near[name].value - gross[name].value > 0.4, name
        assert near[name].value > near["kappa_s"].value > gross[name].value, name
    for pair_near, pair_gross in zip(
        read["adjacent"].pairwise_cohen, read["gross"].pairwise_cohen, strict=True
    ):
        assert pair_near.cohen_w.value - pair_gross.cohen_w.value > 0.4


def test_a_reader_one_grade_high_reads_grade_bias_plus_one() -> None:
    # truth far enough from both ends that neither the +-1 noise nor the bias is clipped
    rng = np.random.default_rng(7)
    k, n_items, readers = 7, 3000, 5
    truth = rng.integers(2, 5, size=n_items)
    noise = np.where(
        rng.random((n_items, readers)) < 0.3, rng.choice([-1, 1], (n_items, readers)), 0
    )
    mat = truth[:, None] + noise
    mat[:, 0] += 1  # reader 0 calls every case one grade too severe
    assert mat.min() >= 0 and mat.max() <= k - 1
    names = [f"reader{r}" for r in range(readers)]
    ms = compute_measures(
        from_matrix(mat, [str(g) for g in range(k)], names=names),
        NO_CI,
        scale=Scale.ORDINAL,
    )
    bias = {r.rater: r.grade_bias.value for r in ms.raters}
    assert bias["reader0"] == pytest.approx(1.0, abs=0.1)
    for other in names[1:]:  # relative to the group: the others read about -1/(R - 1)
        assert bias[other] == pytest.approx(-1 / (readers - 1), abs=0.1)
    # her confusion says the same in words: when she says 4, the others mostly say 3
    row = dict(zip(ms.categories, ms.raters[0].confusion, strict=True))["4"]
    assert int(np.nanargmax(np.asarray(row, dtype=float))) == 3
