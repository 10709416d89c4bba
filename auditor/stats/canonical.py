"""A numbering of raters and items that does not depend on the order of the rows.

A bootstrap draws item weights by item index, and the per-rater resampling draws by rater index.
Storage numbers items and raters in id order, a label file in order of first appearance: the
same labels in another row order got other intervals from the same seed ([-0.004, 0.496]
against [0.024, 0.474] on a 90-row file). With the seed recorded in a snapshot meant to
reproduce it, the resampling must see the labels in one canonical numbering:

* raters in the order of their names (``LabelArrays.rater_names``);
* items in the order of a 64-bit hash of what the measures see of them: each (rater, collapsed
  category) cell and the category counts of its repeated looks. Items with the same hash have
  the same cells (but for a 2^-64 chance) and are interchangeable in every measure, so their
  relative order changes nothing.

The item hash is summed over an item's cells in three 21-bit slices (``bincount`` sums stay
exact in float64), so it costs a few passes over the cells.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from auditor.domain import CollapsePolicy, LabelArrays
from auditor.stats.tables import collapse

_MASK = np.uint64((1 << 64) - 1)
_SLICE = 21


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    result: np.ndarray = z ^ (z >> np.uint64(31))
    return result


def rater_order(labels: LabelArrays) -> np.ndarray | None:
    """Rater indices sorted by name (None without names, or when they are sorted already)."""
    names = labels.rater_names
    if not names:
        return None
    order = np.asarray(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
    return None if bool((order == np.arange(order.shape[0])).all()) else order


def item_hash(labels: LabelArrays, policy: CollapsePolicy) -> np.ndarray:
    """Per item, three float64 sums of 21-bit slices of its cells' hashes, shape (n_items, 3)."""
    cells = collapse(labels, policy)
    k = labels.n_categories
    with np.errstate(over="ignore"):
        cell = _mix(cells.rater.astype(np.uint64) * np.uint64(k) + cells.category.astype(np.uint64))
        if cells.repeat_cell.shape[0]:
            looks = np.zeros(cells.repeat_cell.shape[0], dtype=np.uint64)
            for c in range(k):  # bounded by the number of categories
                looks += _mix(
                    np.uint64(c + 1) << np.uint64(32) | cells.repeat_counts[:, c].astype(np.uint64)
                )
            cell[cells.repeat_cell] = _mix(cell[cells.repeat_cell] ^ looks)
    out = np.empty((labels.n_items, 3))
    part = np.uint64((1 << _SLICE) - 1)
    for s in range(3):  # three slices of the 64 bits
        bits = ((cell >> np.uint64(_SLICE * s)) & part).astype(np.float64)
        out[:, s] = np.bincount(cells.item, weights=bits, minlength=labels.n_items)
    return out


def canonical(labels: LabelArrays, policy: CollapsePolicy) -> tuple[LabelArrays, np.ndarray]:
    """``labels`` renumbered canonically, and the input index of each canonical rater (R,)."""
    n_raters = labels.n_raters
    order = rater_order(labels)
    if order is None:
        order = np.arange(n_raters, dtype=np.int64)
    else:
        position = np.empty(n_raters, dtype=np.int64)
        position[order] = np.arange(n_raters)
        labels = dataclasses.replace(
            labels,
            rater=position[labels.rater],
            rater_is_model=labels.rater_is_model[order],
            rater_names=tuple(labels.rater_names[p] for p in order),
        )
    sums = item_hash(labels, policy)
    items = np.lexsort((sums[:, 2], sums[:, 1], sums[:, 0]))
    rank = np.empty(labels.n_items, dtype=np.int64)
    rank[items] = np.arange(labels.n_items)
    # item names are not read by the statistics (only their count): they stay as they are
    return dataclasses.replace(labels, item=rank[labels.item]), order
