"""A snapshot's seed reproduces its intervals whatever the order of the rows (issue 24 item 6):
the bootstrap sees raters in name order and items in the order of a hash of their content
(``auditor.stats.canonical``)."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings, Scale
from auditor.stats import compute_measures
from auditor.stats.export import measure_set_to_dict
from tests.unit.stats.helpers import rater_model_project

SETTINGS = ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP, bootstrap_resamples=200)


def _renumbered(labels: LabelArrays, seed: int) -> LabelArrays:
    """The same labels as another reader would hand them over: rows shuffled, items and raters
    numbered in order of first appearance (as ``auditor stats`` numbers a file)."""
    rng = np.random.default_rng(seed)
    rows = rng.permutation(labels.n_labels)
    item, rater = labels.item[rows], labels.rater[rows]
    _, first_item = np.unique(item, return_index=True)
    item_order = item[np.sort(first_item)]
    item_rank = np.empty(labels.n_items, dtype=np.int64)
    item_rank[item_order] = np.arange(item_order.shape[0])
    _, first_rater = np.unique(rater, return_index=True)
    rater_order = rater[np.sort(first_rater)]
    rater_rank = np.empty(labels.n_raters, dtype=np.int64)
    rater_rank[rater_order] = np.arange(rater_order.shape[0])
    names = labels.rater_names
    return LabelArrays(
        item=item_rank[item],
        rater=rater_rank[rater],
        category=labels.category[rows],
        order=labels.order[rows],
        rater_is_model=labels.rater_is_model[rater_order],
        category_names=labels.category_names,
        rater_names=tuple(names[p] for p in rater_order),
    )


def _named(labels: LabelArrays, models: tuple[int, ...] = ()) -> LabelArrays:
    is_model = np.isin(np.arange(labels.n_raters), models)
    names = tuple(f"{'clf' if m else 'reader'}-{p:02d}" for p, m in enumerate(is_model))
    return LabelArrays(
        item=labels.item,
        rater=labels.rater,
        category=labels.category,
        order=labels.order,
        rater_is_model=is_model,
        category_names=labels.category_names,
        rater_names=names,
    )


def _keyed(doc: dict) -> dict:
    """The rendered set with pairs keyed by their two raters: the listing follows the order
    in which the input names raters, the values must not."""
    pairs = {frozenset((p["rater_a"], p["rater_b"])): p for p in doc["pairwise_cohen"]}
    for pair in pairs.values():
        pair["rater_a"] = pair["rater_b"] = None
    return {**doc, "pairwise_cohen": pairs}


@pytest.mark.parametrize("scale", list(Scale))
def test_the_seed_gives_the_same_intervals_whatever_the_row_order(scale: Scale) -> None:
    base = _named(
        rater_model_project(90, (0.0, 0.2, 0.5, 1.0, 0.3), (0.5, 0.3, 0.2), 2, 0.3, 3), (4,)
    )
    first = _keyed(measure_set_to_dict(compute_measures(base, SETTINGS, seed=11, scale=scale)))
    for shuffle in range(3):
        again = compute_measures(_renumbered(base, shuffle), SETTINGS, seed=11, scale=scale)
        assert _keyed(measure_set_to_dict(again)) == first  # exactly: every value and bound


def test_before_the_canonical_numbering_the_row_order_moved_the_intervals() -> None:
    # the defect this guards against: the jackknife never depended on the order, the
    # bootstrap's draws did (a different seed stands in for another numbering here)
    base = _named(rater_model_project(90, (0.0, 0.2, 0.5, 0.8), (0.5, 0.3, 0.2), 2, 0.3, 4))
    one = compute_measures(base, SETTINGS, seed=11).measures["kappa_s"]
    other = compute_measures(base, SETTINGS, seed=12).measures["kappa_s"]
    assert (one.ci_low, one.ci_high) != (other.ci_low, other.ci_high)
