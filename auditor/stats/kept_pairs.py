"""Pairwise Cohen from kept confusion tables (``kept``, docs/architecture.md "Kept statistics").

Each rater pair's K x K confusion table over the items both labeled is a sum over items, kept
as project totals only (no item groups): sparse over the pairs that shared an item, keys
a << 21 | b (a < b, kept slots; ``kept_triples.SHIFT``), tables (1, P, K, K). Per group they
would cost G times as much (200 raters, K = 5: 19,900 pairs x 25 cells x 8 bytes = 4 MB in
all, 80 MB over 20 groups). Their intervals need no groups: the full path's delete-one-item
jackknife of a pair's kappa is a function of its confusion table alone
(``cohen.jackknife_intervals``), so the kept totals give the same interval.
"""

from __future__ import annotations

import numpy as np

from auditor.stats.kept_triples import SHIFT

__all__ = ["SHIFT", "decode", "pair_tables"]
from auditor.stats.tables import GroupTable, within_item_pairs

MASK = np.int64((1 << SHIFT) - 1)


def pair_tables(table: GroupTable, s_label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys (P,), tables (1, P, K, K)) of the pairs of kept slots that shared an item; rows
    are the lower slot's category."""
    k = table.counts.shape[1]
    found: list[np.ndarray] = []
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        a, b = s_label[i], s_label[j]
        ca, cb = table.label_category[i], table.label_category[j]
        swap = a > b
        low, high = np.where(swap, b, a), np.where(swap, a, b)
        c_low, c_high = np.where(swap, cb, ca), np.where(swap, ca, cb)
        code = ((low.astype(np.int64) << SHIFT) | high) * (k * k) + c_low * k + c_high
        found.append(code)
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros((1, 0, k, k))
    cells, counts = np.unique(np.concatenate(found), return_counts=True)
    keys, index = np.unique(cells // (k * k), return_inverse=True)
    out = np.zeros((keys.shape[0], k * k))
    out[index.ravel(), cells % (k * k)] = counts
    return keys, out.reshape(1, keys.shape[0], k, k)


def decode(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return keys >> SHIFT, keys & MASK
