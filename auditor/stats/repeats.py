"""The repeat planner's arithmetic: how many hidden repeats a rater needs, and which items.

Pure: arrays in, numbers and choices out (docs/repeats.md gives the account).

**How many.** The service reports a rater's self-agreement SA_p as the mean of SA_pu over the
rater's repeated items with a delete-one jackknife interval (``auditor.stats.intervals``). With
two looks an item's SA_pu is 0 or 1, and the jackknife standard error of a mean of n such
values is sqrt(p (1 - p) / (n - 1)), p = SA_p. The half-width z * se is at most h when

    n >= 1 + z^2 p (1 - p) / h^2.

p is taken at the Agresti-Coull centre (n SA + z^2 / 2) / (n + z^2) of the rater's current
repeats (0.5, the worst case, before there are any), so a rater who agreed with herself on her
first few repeats is not declared precise on a spread of zero; and never fewer than the ten
items below which the service withholds a zero-width interval. More than two looks of an item
only lower its variance: the count is conservative for them.

**Which.** Among the rater's own items whose latest look is at least the gap ago (in time and in
other labels by the rater since), none with an open repeat for her, items not yet repeated
first: items already repeated are proposed only when no other item is eligible. The picks are
stratified by the category the rater gave at her first look: each next pick goes to the
category furthest below its share of her items (counting the repeats she has and the open
ones), so a rater who uses a rare category gets repeats in it too, in proportion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from auditor.stats.intervals import MIN_ITEMS_FOR_ZERO_SPREAD, z_value

MICROS_PER_HOUR = 3_600_000_000


def needed_repeats(
    self_agreement: float | None, n_repeated: int, half_width: float, level: float
) -> int:
    """Repeated items the rater needs for an SA interval of half-width ``half_width``."""
    z = z_value(level)
    if self_agreement is None or n_repeated < 1 or not math.isfinite(self_agreement):
        centre = 0.5
    else:
        centre = (n_repeated * self_agreement + z * z / 2.0) / (n_repeated + z * z)
    n = 1.0 + z * z * centre * (1.0 - centre) / (half_width * half_width)
    return max(MIN_ITEMS_FOR_ZERO_SPREAD, math.ceil(n - 1e-9))


def repeat_room(share: float, n_items: int, n_repeated: int, n_open: int) -> int:
    """How many more repeats the share allows: ceil(share * items) - (repeated + open)."""
    return max(0, math.ceil(share * n_items - 1e-9) - n_repeated - n_open)


@dataclass(frozen=True)
class RaterItems:
    """One rater's items, one entry per item (I,), from her labels.

    item : item ids. first_category : category of her first look. first_at, last_at : times
    of her first and latest look (microseconds). looks : her looks at it. after : her labels
    on other items after her latest look at it.
    """

    item: np.ndarray
    first_category: np.ndarray
    first_at: np.ndarray
    last_at: np.ndarray
    looks: np.ndarray
    after: np.ndarray


def rater_items(item: np.ndarray, category: np.ndarray, at: np.ndarray) -> RaterItems:
    """Per item facts from one rater's labels (N,), given in labeled_at order (ties by id)."""
    n = item.shape[0]
    ids, first, inverse, looks = np.unique(
        item, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    last = np.zeros(ids.shape[0], dtype=np.int64)
    np.maximum.at(last, inverse, np.arange(n, dtype=np.int64))
    return RaterItems(
        item=ids,
        first_category=category[first],
        first_at=at[first],
        last_at=at[last],
        looks=looks,
        after=(n - 1 - last).astype(np.int64),
    )


def n_repeated(items: RaterItems) -> int:
    return int((items.looks >= 2).sum())


def eligible(
    items: RaterItems,
    now: int,
    min_gap_hours: float,
    min_gap_items: int,
    open_items: np.ndarray,
    since: int | None = None,
) -> np.ndarray:
    """Mask (I,) of items that may be planned now (``now`` and ``since`` in microseconds)."""
    ok = (now - items.last_at >= min_gap_hours * MICROS_PER_HOUR) & (items.after >= min_gap_items)
    ok &= ~np.isin(items.item, open_items)
    if since is not None:
        ok &= items.first_at >= since
    return ok


@dataclass(frozen=True)
class Pick:
    item: int
    category: int
    repeated_before: bool


def choose(
    items: RaterItems,
    mask: np.ndarray,
    k: int,
    open_categories: np.ndarray,
    rng: np.random.Generator,
) -> list[Pick]:
    """Up to ``k`` eligible items (``mask``), stratified by first category (module docstring).

    ``open_categories``: the first categories of the rater's open repeats (they count as
    repeats she has, for the stratification)."""
    if k <= 0 or not mask.any():
        return []
    categories = items.first_category
    n_categories = int(max(categories.max(initial=-1), open_categories.max(initial=-1))) + 1
    share = np.bincount(categories, minlength=n_categories) / max(categories.shape[0], 1)
    have = np.bincount(categories[items.looks >= 2], minlength=n_categories).astype(float)
    have += np.bincount(open_categories, minlength=n_categories)
    fresh = mask & (items.looks < 2)
    # items not yet repeated first; the already repeated only once none of those is left
    pools = {}
    for c in range(n_categories):
        in_c = np.flatnonzero(fresh & (categories == c))
        pools[c] = list(in_c[rng.permutation(in_c.shape[0])])
    again = np.flatnonzero(mask & (items.looks >= 2))
    again = again[np.lexsort((rng.random(again.shape[0]), items.looks[again]))]
    picks: list[Pick] = []
    while len(picks) < k:
        open_pools = [c for c in range(n_categories) if pools[c]]
        if not open_pools:
            break
        total = have.sum() + 1.0
        c = max(open_pools, key=lambda c: (share[c] * total - have[c], share[c]))
        position = pools[c].pop()
        picks.append(Pick(int(items.item[position]), c, False))
        have[c] += 1.0
    for position in again[: k - len(picks)]:
        picks.append(Pick(int(items.item[position]), int(categories[position]), True))
    return picks
