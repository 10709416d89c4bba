"""The repeat planner's arithmetic: the needed count gives the wanted half-width of the interval
the service reports for self-agreement (simulated raters of known SA), and the stratified pick."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.stats import intervals
from auditor.stats.repeats import choose, eligible, needed_repeats, rater_items, repeat_room


@pytest.mark.parametrize("true_sa", [0.5, 0.7, 0.85])
def test_needed_count_reaches_the_wanted_half_width(true_sa: float) -> None:
    """Raters whose two looks agree with chance ``true_sa``, given the needed number of repeated
    items: the jackknife interval of SA (as the service computes it) has a half-width of about
    0.10 on average: at most 0.10, and not much under (the count is not wasteful)."""
    rng = np.random.default_rng(3)
    n = needed_repeats(true_sa, 10_000, 0.10, 0.95)  # a long history: the centre is SA
    trials = 400
    cells = (rng.random((trials, n)) < true_sa).astype(float).reshape(-1)
    group = np.repeat(np.arange(trials), n)
    low, high = intervals.grouped_means(cells, group, trials, "jackknife", 0.95, None, 0)
    half = (high - low) / 2
    assert 0.09 < float(np.mean(half)) <= 0.1005


def test_needed_count_worst_case_and_floor() -> None:
    assert needed_repeats(None, 0, 0.10, 0.95) == 98  # 1 + 1.96^2 / 4 / 0.01 = 97.04
    assert needed_repeats(1.0, 3, 0.10, 0.95) > 10  # three agreeing repeats prove little
    assert needed_repeats(1.0, 10_000, 0.30, 0.95) == 10  # the zero-spread floor
    assert needed_repeats(0.9, 200, 0.05, 0.95) > needed_repeats(0.9, 200, 0.10, 0.95)


def test_room_is_the_share_of_items_less_repeats_had_and_open() -> None:
    assert repeat_room(0.10, 95, 3, 2) == 5  # ceil(9.5) - 5
    assert repeat_room(0.10, 10, 3, 2) == 0


def test_gaps_and_open_items() -> None:
    hour = 3_600_000_000
    item = np.array([5, 6, 7, 5, 8])
    at = np.array([0, 1, 2, 3, 30]) * hour
    items = rater_items(item, np.zeros(5, dtype=np.int64), at)
    assert items.item.tolist() == [5, 6, 7, 8]
    assert items.looks.tolist() == [2, 1, 1, 1]
    assert items.after.tolist() == [1, 3, 2, 0]  # labels on other items after the latest look
    mask = eligible(items, 30 * hour, 24, 2, np.array([6]))
    assert mask.tolist() == [False, False, True, False]  # 5: 1 after; 6: open; 8: too recent


def test_choose_covers_a_rare_category_and_repeats_last() -> None:
    rng = np.random.default_rng(0)
    categories = np.array([0] * 95 + [1] * 5)
    items = rater_items(np.arange(100), categories, np.arange(100))
    picks = choose(items, np.ones(100, bool), 20, np.array([], dtype=np.int64), rng)
    per = np.bincount([p.category for p in picks], minlength=2)
    assert per.tolist() == [19, 1]  # 5% of 20
    assert len({p.item for p in picks}) == 20
    # with every fresh item open elsewhere, only items already repeated remain
    twice = rater_items(np.array([1, 2, 1]), np.array([0, 0, 0]), np.array([0, 1, 2]))
    picks = choose(twice, np.array([True, True]), 2, np.array([], dtype=np.int64), rng)
    assert [(p.item, p.repeated_before) for p in picks] == [(2, False), (1, True)]
