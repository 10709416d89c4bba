"""rho, self-agreement and the rater model against loops written from docs/measures.md,
"Version 2"."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from auditor.domain import (
    IntervalMethod,
    LabelArrays,
    ProjectSettings,
    RaterModel,
    RhoMode,
    RhoUnrated,
)
from auditor.stats import compute_measures
from auditor.stats.selfagreement import max_entropy_split
from auditor.stats.synthetic import synthetic_project


def reliability_by_loop(
    labels: LabelArrays, model: RaterModel
) -> tuple[dict[tuple[int, int], int], np.ndarray, dict[int, float]]:
    """Collapse 'first' by hand, P over pairable items, and Y_p of every rater with repeats."""
    k = labels.n_categories
    rows = sorted(range(labels.n_labels), key=lambda i: (int(labels.order[i]), i))
    first: dict[tuple[int, int], int] = {}
    looks: dict[tuple[int, int], list[int]] = {}
    for i in rows:
        key = (int(labels.item[i]), int(labels.rater[i]))
        first.setdefault(key, int(labels.category[i]))
        looks.setdefault(key, []).append(int(labels.category[i]))
    per_item: dict[int, int] = {}
    for item, _ in first:
        per_item[item] = per_item.get(item, 0) + 1
    pairable = [c for (item, _), c in first.items() if per_item[item] >= 2]
    prevalence = np.bincount(pairable, minlength=k) / len(pairable)
    s = float((prevalence**2).sum())
    by_rater: dict[int, list[float]] = {}
    for (_item, rater), seen in looks.items():
        m = len(seen)
        if m < 2:
            continue
        if model == RaterModel.MOMENTS:
            agreeing = sum(a == b for a, b in itertools.combinations(seen, 2))
            by_rater.setdefault(rater, []).append(agreeing / (m * (m - 1) / 2))
        else:
            d = np.bincount(seen, minlength=k) / m
            by_rater.setdefault(rater, []).append(
                float(max_entropy_split(d[None], prevalence)[0][0])
            )
    y: dict[int, float] = {}
    for rater, values in by_rater.items():
        if model == RaterModel.MOMENTS:
            y[rater] = float(np.sqrt(np.clip((np.mean(values) - s) / (1 - s), 0, 1)))
        else:
            y[rater] = 1.0 - float(np.mean(values))
    return first, prevalence, y


def rho_by_pairs(
    labels: LabelArrays, mode: RhoMode, unrated: RhoUnrated, model: RaterModel
) -> float | None:
    """Eq. 5 pair by pair with GAE of docs/measures.md, "Version 2"."""
    first, prevalence, y = reliability_by_loop(labels, model)
    if not y:
        return None
    pooled = float(np.mean(list(y.values())))
    for r in range(labels.n_raters):
        if r not in y and unrated == RhoUnrated.POOL:
            y[r] = pooled
        elif r not in y and unrated == RhoUnrated.PERFECT:
            y[r] = 1.0
    per_item = []
    for item in range(labels.n_items):
        raters = [r for r in range(labels.n_raters) if (item, r) in first and r in y]
        if len(raters) < 2:
            continue
        total = 0.0
        for i, j in itertools.combinations(raters, 2):
            c = first[(item, i)]
            if c != first[(item, j)]:
                continue
            p = prevalence[c]
            if mode == RhoMode.EXACT:
                t = y[i] * y[j]
                total += t / (t + p * (1 - t)) if t > 0 else 0.0
            else:
                gi = y[i] / (y[i] + p * (1 - y[i])) if y[i] > 0 else 0.0
                gj = y[j] / (y[j] + p * (1 - y[j])) if y[j] > 0 else 0.0
                total += gi * gj
        per_item.append(total / (len(raters) * (len(raters) - 1) / 2))
    return float(np.mean(per_item)) if per_item else None


@pytest.mark.parametrize("model", list(RaterModel))
@pytest.mark.parametrize("mode", list(RhoMode))
@pytest.mark.parametrize("unrated", list(RhoUnrated))
@pytest.mark.parametrize("seed", range(3))
def test_rho_equals_the_pairwise_definition(model, mode, unrated, seed: int) -> None:
    labels = synthetic_project(
        40,
        4 + 4 * (seed == 2),  # seed 2: more raters than labels per item walk the pair path
        n_categories=2 + seed % 2,
        missing=0.3 + 0.5 * (seed == 2),
        repeat_share=0.15 + 0.1 * seed,
        presentations=3 + seed,
        reliability=[0.9, 0.6, 0.4, 0.7, 0.3, 1.0, 0.8, 0.5][: 4 + 4 * (seed == 2)],
        seed=seed,
    )
    settings = ProjectSettings(
        interval_method=IntervalMethod.NONE, rho_mode=mode, rho_unrated=unrated, rater_model=model
    )
    ms = compute_measures(labels, settings)
    expected = rho_by_pairs(labels, mode, unrated, model)
    got = ms.measures["rho"].value
    assert (got is None) == (expected is None)
    if got is not None:
        assert got == pytest.approx(expected, abs=1e-12)
    _, _, y = reliability_by_loop(labels, model)
    for p, rater in enumerate(ms.raters):
        if p in y:
            assert rater.reliability.value == pytest.approx(y[p], abs=1e-12)
            assert rater.random_choice.value == pytest.approx(1 - y[p], abs=1e-12)


def _rows(rows: list[tuple[int, int, int]], k: int = 2) -> LabelArrays:
    arr = np.asarray(rows)
    return LabelArrays(
        item=arr[:, 0],
        rater=arr[:, 1],
        category=arr[:, 2],
        order=np.arange(len(rows)),
        rater_is_model=np.zeros(int(arr[:, 1].max()) + 1, bool),
        category_names=tuple("abcd"[:k]),
    )


def test_self_agreement_is_the_share_of_agreeing_pairs_of_looks() -> None:
    # rater 0: item 0 seen as a, a, b (1 agreeing pair of 3); item 1 seen as b, b (1 of 1)
    rows = [(0, 0, 0), (0, 0, 0), (0, 0, 1), (1, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 1)]
    ms = compute_measures(_rows(rows), ProjectSettings(interval_method=IntervalMethod.NONE))
    rater = ms.raters[0]
    assert rater.self_agreement.value == pytest.approx((1 / 3 + 1) / 2)
    assert (rater.n_repeated_items, rater.n_presentations) == (2, 5)
    assert ms.measures["mean_self_agreement"].value == pytest.approx((1 / 3 + 1) / 2)
    assert ms.measures["mean_self_agreement"].n == 2
    # P over the first looks on pairable items: a, a (item 0), b, b (item 1): s = 1/2
    kappa = ((1 / 3 + 1) / 2 - 0.5) / 0.5
    assert rater.self_kappa.value == pytest.approx(kappa)
    assert rater.reliability.value == pytest.approx(np.sqrt(kappa))
    assert rater.random_choice.value == pytest.approx(1 - np.sqrt(kappa))
    assert ms.rater_model == RaterModel.MOMENTS


def test_a_random_binary_rater_with_two_looks_reads_one_half_not_three_quarters() -> None:
    # looks (a, b), (b, a), (a, a), (b, b): two of four items agree, SA = 0.5 = chance
    rows = [(0, 0, 0), (0, 0, 1), (1, 0, 1), (1, 0, 0), (2, 0, 0), (2, 0, 0), (3, 0, 1)]
    rows += [(3, 0, 1)] + [(u, 1, u % 2) for u in range(4)]
    ms = compute_measures(_rows(rows), ProjectSettings(interval_method=IntervalMethod.NONE))
    assert ms.raters[0].self_agreement.value == pytest.approx(0.5)
    assert ms.raters[0].random_choice.value == pytest.approx(1.0)
    assert ms.raters[0].self_kappa.value == pytest.approx(0.0)
    assert ms.raters[0].self_kappa.band == "slight"


def test_max_entropy_mode_keeps_the_papers_per_item_solve() -> None:
    # the first contract's fixed case: binary, one repeated item seen as a, a, b with P = (1/2,
    # 1/2): d = (2/3, 1/3), x bounded by 2/3 and the entropy root below it
    rows = [(0, 0, 0), (0, 0, 0), (0, 0, 1), (0, 1, 1), (1, 0, 0), (1, 1, 1)]
    labels = _rows(rows)
    settings = ProjectSettings(
        interval_method=IntervalMethod.NONE, rater_model=RaterModel.MAX_ENTROPY
    )
    ms = compute_measures(labels, settings)
    x, _ = max_entropy_split(np.array([[2 / 3, 1 / 3]]), np.array([0.5, 0.5]))
    assert 0 < x[0] <= 2 / 3
    assert ms.raters[0].random_choice.value == pytest.approx(float(x[0]), abs=1e-12)
    assert ms.raters[0].reliability.value == pytest.approx(1 - float(x[0]), abs=1e-12)
    assert ms.rater_model == RaterModel.MAX_ENTROPY


@pytest.mark.parametrize("unrated", list(RhoUnrated))
def test_exact_rho_is_the_same_by_masks_dense_blocks_and_label_pairs(
    unrated: RhoUnrated, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.stats import rho as rho_module

    labels = synthetic_project(
        300, 6, n_categories=4, missing=0.4, repeat_share=0.3, reliability=0.6, seed=8
    )
    settings = ProjectSettings(
        interval_method=IntervalMethod.NONE, rho_mode=RhoMode.EXACT, rho_unrated=unrated
    )
    by_masks = compute_measures(labels, settings).measures["rho"].value
    monkeypatch.setattr(rho_module, "MAX_MASK_RATERS", 0)  # the quadratic form on dense blocks
    dense = compute_measures(labels, settings).measures["rho"].value
    monkeypatch.setattr(rho_module, "DENSE_OCCUPANCY", 0)  # every item walks its label pairs
    pairs = compute_measures(labels, settings).measures["rho"].value
    assert by_masks is not None
    assert dense == pytest.approx(by_masks, abs=1e-12)
    assert pairs == pytest.approx(by_masks, abs=1e-12)
    assert by_masks == pytest.approx(
        rho_by_pairs(labels, RhoMode.EXACT, unrated, RaterModel.MOMENTS), abs=1e-12
    )
