"""Undefined measures come back as None with a reason, never NaN, never 0."""

from __future__ import annotations

import json

import numpy as np

from auditor.domain import IntervalMethod, ProjectSettings, RhoUnrated
from auditor.stats import compute_measures, kappa_s, tables
from auditor.stats.export import measure_set_to_dict
from tests.unit.stats.helpers import NO_CI, from_matrix, from_rows

CATS = ["a", "b"]


def test_no_pairable_item() -> None:
    ms = compute_measures(from_matrix([[0, -1], [-1, 1]], CATS), ProjectSettings())
    for name in ("observed_agreement", "kappa_s", "fleiss_kappa", "krippendorff_alpha"):
        m = ms.measures[name]
        assert m.value is None and "no pairable item" in (m.reason or ""), name
    assert ms.measures["rho"].reason == "no repeated presentations"
    assert ms.pairwise_cohen == ()


def test_single_category_in_use() -> None:
    ms = compute_measures(from_matrix([[1, 1, 1], [1, 1, 1]], CATS), ProjectSettings())
    assert ms.measures["observed_agreement"].value == 1.0
    for name in ("kappa_s", "fleiss_kappa", "krippendorff_alpha"):
        m = ms.measures[name]
        assert m.value is None and "single" in (m.reason or ""), name
    assert ms.pairwise_cohen[0].kappa.value is None
    assert "single category" in (ms.pairwise_cohen[0].kappa.reason or "")


def test_model_against_a_group_that_never_agrees() -> None:
    # Amax = 0 < Ae: humans 0 and 1 always disagree; S would read 1 for any candidate
    mat = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 1]])
    ms = compute_measures(from_matrix(mat, CATS, models=[2]), NO_CI)
    s = ms.models[0].s
    assert s.value is None and "Amax <= Ae" in (s.reason or "")


def test_model_against_shah_hypo0_group() -> None:
    # Shah (2011) Section 4.1: when all experts disagree Amax = 0 (and here Ae = 0 too)
    mat = np.column_stack([np.tile(np.arange(4), (8, 1)), np.arange(8) % 4])
    ms = compute_measures(from_matrix(mat, ["L1", "L2", "L3", "L4"], models=[4]), NO_CI)
    assert ms.models[0].s.value is None and ms.models[0].s.reason


def test_model_without_pairable_items() -> None:
    mat = np.array([[0, 0, -1], [1, -1, 1]])
    ms = compute_measures(from_matrix(mat, CATS, models=[2]), NO_CI)
    assert ms.models[0].s.value is None and ms.models[0].s.reason
    assert ms.models[0].kappa_va.value is None


def test_rater_without_repeats_and_without_shared_items() -> None:
    ms = compute_measures(from_matrix([[0, 1, -1], [1, 1, -1], [0, -1, 0]], CATS), NO_CI)
    third = ms.raters[2]
    assert third.self_agreement.value is None
    assert third.self_agreement.reason == "no repeated presentations"
    assert third.random_choice.value is None and third.n_repeated_items == 0
    assert third.s_vs_group.value is None and third.s_vs_group.reason


def test_rho_exclude_with_a_single_rated_rater() -> None:
    rows = [(0, 0, 0), (0, 0, 0), (0, 1, 0), (1, 0, 1), (1, 1, 1)]
    settings = ProjectSettings(interval_method=IntervalMethod.NONE, rho_unrated=RhoUnrated.EXCLUDE)
    ms = compute_measures(from_rows(rows, 2, CATS), settings)
    assert ms.measures["rho"].value is None and ms.measures["rho"].reason


def test_jackknife_with_one_item_gives_no_interval_but_a_value() -> None:
    ms = compute_measures(from_matrix([[0, 1]], CATS), ProjectSettings())
    m = ms.measures["observed_agreement"]
    assert m.value == 0.0 and m.ci_low is None and m.ci_reason


def test_json_never_holds_nan() -> None:
    ms = compute_measures(from_matrix([[1, 1, 1], [1, 1, 1]], CATS), ProjectSettings())
    text = json.dumps(measure_set_to_dict(ms), allow_nan=False)
    assert "NaN" not in text


def test_repeats_without_a_pairable_item_say_so_in_rho() -> None:
    rows = [(0, 0, 0), (0, 0, 1), (1, 1, 1), (1, 1, 1)]  # two raters, never on one item
    ms = compute_measures(from_rows(rows, 2, CATS), NO_CI)
    assert ms.measures["rho"].value is None
    assert ms.measures["rho"].reason == "no item labeled by two raters"
    assert ms.raters[0].self_agreement.value == 0.0  # defined: the rater has repeats


def test_a_bootstrap_that_cannot_run_says_why_in_the_json() -> None:
    # 120 raters, 3 per item: too many rater-set patterns for kappa_S's bootstrap
    rng = np.random.default_rng(0)
    rows = [
        (u, int(r), int(rng.integers(0, 2)))
        for u in range(1500)
        for r in rng.choice(120, 3, replace=False)
    ]
    settings = ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP, bootstrap_resamples=20)
    ms = compute_measures(from_rows(rows, 120, CATS), settings)
    kappa = measure_set_to_dict(ms)["measures"]["kappa_s"]
    assert kappa["value"] is not None and kappa["ci_low"] is None
    assert "too many rater-set patterns" in kappa["ci_reason"]
    assert measure_set_to_dict(ms)["measures"]["fleiss_kappa"]["ci_reason"] is None


def test_a_value_within_rounding_of_zero_reads_zero_with_the_band_of_zero() -> None:
    # Ao = Ae here, and the sums leave kappa_S at 8.3e-17 ("poor" if taken at face value)
    mat = [[0, 2, 0], [2, 1, 2], [1, 2, 1]]
    table = tables.group_table(tables.collapse(from_matrix(mat, "abc")), np.zeros(3, bool))
    assert 0 < abs(kappa_s.estimate(table)[0]) < 1e-12
    kappa = compute_measures(from_matrix(mat, "abc"), NO_CI).measures["kappa_s"]
    assert kappa.value == 0.0 and kappa.band == "slight"


def test_share_intervals_never_fall_below_zero() -> None:
    ms = compute_measures(from_matrix([[0, 0], [0, 1]], CATS), ProjectSettings())
    observed = ms.measures["observed_agreement"]
    assert observed.value == 0.5 and observed.ci_low == 0.0


def test_a_zero_width_jackknife_from_few_items_is_withheld() -> None:
    ms = compute_measures(from_matrix([[0, 0], [1, 1], [0, 0]], CATS), ProjectSettings())
    observed = ms.measures["observed_agreement"]
    assert observed.value == 1.0 and observed.ci_low is None and observed.ci_high is None
    assert observed.ci_reason == "too few items to estimate the spread"
    # from ten items on, a spread of zero is what the data say
    many = compute_measures(from_matrix([[0, 0], [1, 1]] * 5, CATS), ProjectSettings())
    assert many.measures["observed_agreement"].ci_low == 1.0


def test_a_zero_width_cohen_jackknife_from_few_shared_items_is_withheld() -> None:
    ms = compute_measures(from_matrix([[0, 0], [1, 1], [0, 0]], CATS), ProjectSettings())
    kappa = ms.pairwise_cohen[0].kappa
    assert kappa.value == 1.0 and kappa.ci_low is None and kappa.ci_reason
    many = compute_measures(from_matrix([[0, 0], [1, 1]] * 5, CATS), ProjectSettings())
    assert many.pairwise_cohen[0].kappa.ci_low == 1.0
