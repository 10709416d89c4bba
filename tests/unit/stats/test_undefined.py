"""Undefined measures come back as None with a reason, never NaN, never 0."""

from __future__ import annotations

import json

import numpy as np

from auditor.domain import IntervalMethod, ProjectSettings, RhoUnrated
from auditor.stats import compute_measures
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
