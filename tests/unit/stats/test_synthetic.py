"""The synthetic project generator: seeded, shaped as asked, and drift does what it says."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from auditor.domain import IntervalMethod, ProjectSettings
from auditor.stats import compute_measures, raters, tables
from auditor.stats.selfagreement import self_agreement
from auditor.stats.synthetic import MICROSECONDS_PER_DAY, START, Drift, items_for, synthetic_project


def test_same_seed_same_project_and_shape() -> None:
    a = synthetic_project(500, 6, n_models=2, seed=11)
    b = synthetic_project(500, 6, n_models=2, seed=11)
    c = synthetic_project(500, 6, n_models=2, seed=12)
    for name in ("item", "rater", "category", "order"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.category, c.category)
    assert a.rater_is_model.tolist() == [False] * 6 + [True] * 2
    assert a.rater_names[-1] == "m1" and a.category_names == ("c0", "c1", "c2", "c3")
    assert (np.diff(a.order) >= 0).all()  # rows in time order, like ingestion
    human = ~a.rater_is_model[a.rater]
    expected = 500 * 6 * 0.8 * 1.02
    assert abs(human.sum() - expected) < 5 * np.sqrt(expected)
    assert (~human).sum() == 500 * 2  # models label every item once


def test_items_for_targets_a_label_count() -> None:
    n_items = items_for(100_000, 10, 0.2, 0.02)
    labels = synthetic_project(n_items, 10, seed=1)
    assert abs(labels.n_labels - 100_000) < 2_000


def test_reliability_orders_self_agreement_and_drift_lowers_it_later() -> None:
    labels = synthetic_project(
        3000,
        3,
        n_categories=2,
        repeat_share=0.3,
        presentations=4,
        reliability=[0.95, 0.6, 0.95],
        drift=Drift(rater=2, at_day=15.0, reliability=0.2),
        seed=3,
    )
    ms = compute_measures(labels, ProjectSettings(interval_method=IntervalMethod.NONE))
    sa = [r.self_agreement.value for r in ms.raters]
    assert sa[0] > sa[1]
    late = labels.order >= START + 15 * MICROSECONDS_PER_DAY
    early_ms = compute_measures(
        dataclasses.replace(
            labels,
            item=labels.item[~late],
            rater=labels.rater[~late],
            category=labels.category[~late],
            order=labels.order[~late],
        ),
        ProjectSettings(interval_method=IntervalMethod.NONE),
    )
    late_ms = compute_measures(
        dataclasses.replace(
            labels,
            item=labels.item[late],
            rater=labels.rater[late],
            category=labels.category[late],
            order=labels.order[late],
        ),
        ProjectSettings(interval_method=IntervalMethod.NONE),
    )
    assert early_ms.raters[2].self_agreement.value > late_ms.raters[2].self_agreement.value + 0.1
    assert (
        abs(early_ms.raters[0].self_agreement.value - late_ms.raters[0].self_agreement.value) < 0.05
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_categories": 1}, "n_categories >= 2"),
        ({"missing": 1.0}, "missing must be in"),
        ({"presentations": 1}, "presentations must be >= 2"),
        ({"prevalence": [0.5, 0.5]}, "prevalence must be 4"),
        ({"drift": Drift(rater=9, at_day=1, reliability=0.5)}, "drift.rater"),
    ],
)
def test_bad_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        synthetic_project(10, 3, **kwargs)


def test_mean_self_agreement_jackknife_equals_refits() -> None:
    labels = synthetic_project(60, 4, n_categories=3, repeat_share=0.2, presentations=3, seed=4)
    cells = tables.collapse(labels)
    sa = self_agreement(
        cells.repeat_counts,
        cells.rater[cells.repeat_cell],
        cells.item[cells.repeat_cell],
        labels.n_raters,
    )
    settings = ProjectSettings(interval_method=IntervalMethod.JACKKNIFE, interval_level=0.9)
    measure = raters.mean_self_agreement(sa, settings, None)
    refits = []
    for u in np.unique(sa.cell_item):
        keep = sa.cell_item != u
        k = np.bincount(sa.cell_rater[keep], minlength=labels.n_raters)
        total = np.bincount(
            sa.cell_rater[keep], weights=sa.cell_sa[keep], minlength=labels.n_raters
        )
        refits.append((total[k > 0] / k[k > 0]).mean())
    refits = np.array(refits)
    n = refits.shape[0]
    se = np.sqrt((n - 1) / n * ((refits - refits.mean()) ** 2).sum())
    assert (measure.ci_high - measure.ci_low) / 2 == pytest.approx(
        1.6448536269514722 * se, rel=1e-9
    )
