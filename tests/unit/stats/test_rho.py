"""rho and self-agreement against a loop over rater pairs written from MEASURES.md 8-9."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings, RhoMode, RhoUnrated
from auditor.stats import compute_measures
from auditor.stats.selfagreement import max_entropy_split
from auditor.stats.synthetic import synthetic_project


def rho_by_pairs(labels, mode: RhoMode, unrated: RhoUnrated) -> tuple[float | None, int]:
    """Collapse 'first' by hand, the rater model per repeated cell, then Eq. 5 pair by pair."""
    k, n_raters = labels.n_categories, labels.n_raters
    rows = sorted(
        range(labels.n_labels), key=lambda i: (int(labels.order[i]), i)
    )  # time order, ties by row
    first: dict[tuple[int, int], int] = {}
    looks: dict[tuple[int, int], list[int]] = {}
    for i in rows:
        key = (int(labels.item[i]), int(labels.rater[i]))
        first.setdefault(key, int(labels.category[i]))
        looks.setdefault(key, []).append(int(labels.category[i]))
    prevalence = np.bincount(list(first.values()), minlength=k) / len(first)
    xs: dict[int, list[float]] = {}
    ys: dict[int, list[np.ndarray]] = {}
    for (_item, rater), seen in looks.items():
        if len(seen) >= 2:
            d = np.bincount(seen, minlength=k) / len(seen)
            x, y = max_entropy_split(d[None, :], prevalence)
            xs.setdefault(rater, []).append(float(x[0]))
            ys.setdefault(rater, []).append(y[0])
    if not xs:
        return None, 0
    x = {r: float(np.mean(v)) for r, v in xs.items()}
    y = {r: np.mean(ys[r], axis=0) for r in xs}
    for r in range(n_raters):
        if r in x:
            continue
        if unrated == RhoUnrated.POOL:
            x[r] = float(np.mean([x[q] for q in xs]))
            y[r] = np.mean([y[q] for q in xs], axis=0)
        elif unrated == RhoUnrated.PERFECT:
            x[r], y[r] = 0.0, prevalence.copy()
    fallbacks, per_item = 0, []
    for item in range(labels.n_items):
        raters = [r for r in range(n_raters) if (item, r) in first and r in x]
        if len(raters) < 2:
            continue
        total = 0.0
        for i, j in itertools.combinations(raters, 2):
            c = first[(item, i)]
            if c != first[(item, j)]:
                continue
            approx = ((1 - x[i]) * (1 - x[j])) / (
                (1 - x[i] + prevalence[c] * x[i]) * (1 - x[j] + prevalence[c] * x[j])
            )
            if mode == RhoMode.EXACT:
                den = (y[i][c] + prevalence[c] * x[i]) * (y[j][c] + prevalence[c] * x[j])
                if den > 0:
                    total += y[i][c] * y[j][c] / den
                    continue
                fallbacks += 1
            total += approx
        per_item.append(total / (len(raters) * (len(raters) - 1) / 2))
    return (float(np.mean(per_item)) if per_item else None), fallbacks


@pytest.mark.parametrize("mode", list(RhoMode))
@pytest.mark.parametrize("unrated", list(RhoUnrated))
@pytest.mark.parametrize("seed", range(3))
def test_rho_equals_the_pairwise_definition(mode, unrated, seed: int) -> None:
    labels = synthetic_project(
        40,
        4,
        n_categories=2 + seed % 2,
        missing=0.3,
        repeat_share=0.15 + 0.1 * seed,
        presentations=3 + seed,
        reliability=[0.9, 0.6, 0.4, 0.7],
        seed=seed,
    )
    settings = ProjectSettings(
        interval_method=IntervalMethod.NONE, rho_mode=mode, rho_unrated=unrated
    )
    ms = compute_measures(labels, settings)
    expected, fallbacks = rho_by_pairs(labels, mode, unrated)
    got = ms.measures["rho"].value
    assert (got is None) == (expected is None)
    if got is not None:
        assert got == pytest.approx(expected, abs=1e-12)
    assert ms.rho_exact_fallbacks == fallbacks


def test_exact_mode_counts_fallbacks_for_a_category_never_used_in_repeats() -> None:
    # binary task; rater 0 repeats item 0 twice saying "a", so y_0(b) = 0 and with x_0 = 0 the
    # exact denominator for "b" is 0: pairs agreeing on "b" with rater 0 fall back.
    rows = [(0, 0, 0), (0, 0, 0), (0, 1, 0), (1, 0, 1), (1, 1, 1), (2, 0, 1), (2, 1, 1)]
    arr = np.asarray(rows)
    labels = LabelArrays(
        item=arr[:, 0],
        rater=arr[:, 1],
        category=arr[:, 2],
        order=np.arange(len(rows)),
        rater_is_model=np.zeros(2, bool),
        category_names=("a", "b"),
    )
    settings = ProjectSettings(interval_method=IntervalMethod.NONE, rho_mode=RhoMode.EXACT)
    ms = compute_measures(labels, settings)
    assert ms.rho_exact_fallbacks == 2
    assert ms.measures["rho"].value == pytest.approx(
        rho_by_pairs(labels, RhoMode.EXACT, RhoUnrated.POOL)[0]
    )


def test_self_agreement_is_the_mean_gini_complement_over_repeated_items() -> None:
    # rater 0: item 0 seen as a, a, b (SA = 5/9); item 1 seen as b, b (SA = 1)
    rows = [(0, 0, 0), (0, 0, 0), (0, 0, 1), (1, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 1)]
    arr = np.asarray(rows)
    labels = LabelArrays(
        item=arr[:, 0],
        rater=arr[:, 1],
        category=arr[:, 2],
        order=np.arange(len(rows)),
        rater_is_model=np.zeros(2, bool),
        category_names=("a", "b"),
    )
    ms = compute_measures(labels, ProjectSettings(interval_method=IntervalMethod.NONE))
    rater = ms.raters[0]
    assert rater.self_agreement.value == pytest.approx((5 / 9 + 1) / 2)
    assert (rater.n_repeated_items, rater.n_presentations) == (2, 5)
    assert ms.measures["mean_self_agreement"].value == pytest.approx((5 / 9 + 1) / 2)
    assert ms.measures["mean_self_agreement"].n == 2
    assert rater.x + sum(rater.y) == pytest.approx(1.0)
