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

from auditor.stats.kept_triples import DENSE_CELLS, SHIFT

__all__ = [
    "SHIFT",
    "bias_index_states",
    "decode",
    "pair_differences",
    "pair_tables",
]  # SHIFT: the key layout, read by kept_verify
from auditor.stats.tables import GroupTable, within_item_pairs

# SHIFT: the key layout, read by kept_verify
__all__ = ["SHIFT", "bias_index_states", "decode", "pair_differences", "pair_tables"]

MASK = np.int64((1 << SHIFT) - 1)


def pair_tables(table: GroupTable, s_label: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys (P,), tables (1, P, K, K)) of the pairs of the ``r`` kept slots that shared an
    item; rows are the lower slot's category. Up to ``DENSE_CELLS`` cells a dense bincount
    sums them (as ``cohen``'s tallies), above it a sort of the codes."""
    k = table.counts.shape[1]
    dense = np.zeros(r * r * k * k) if r * r * k * k <= DENSE_CELLS else None
    found: list[np.ndarray] = []
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        a, b = s_label[i], s_label[j]
        ca, cb = table.label_category[i], table.label_category[j]
        swap = a > b
        low, high = np.where(swap, b, a), np.where(swap, a, b)
        c_low, c_high = np.where(swap, cb, ca), np.where(swap, ca, cb)
        if dense is not None:
            code = (low * r + high) * (k * k) + c_low * k + c_high
            dense += np.bincount(code, minlength=dense.shape[0])
            continue
        found.append(((low.astype(np.int64) << SHIFT) | high) * (k * k) + c_low * k + c_high)
    if dense is not None:
        by_pair = dense.reshape(r * r, k * k)
        used = np.flatnonzero(by_pair.any(axis=1))
        low, high = np.divmod(used, r)
        keys = (low.astype(np.int64) << SHIFT) | high
        return keys, by_pair[used].reshape(1, used.shape[0], k, k)
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros((1, 0, k, k))
    cells, counts = np.unique(np.concatenate(found), return_counts=True)
    keys, index = np.unique(cells // (k * k), return_inverse=True)
    out = np.zeros((keys.shape[0], k * k))
    out[index.ravel(), cells % (k * k)] = counts
    return keys, out.reshape(1, keys.shape[0], k, k)


def pair_differences(
    table: GroupTable, g_item: np.ndarray, s_label: np.ndarray, groups: int, r: int
) -> tuple[np.ndarray, np.ndarray]:
    """(keys (P,), values (G, P, K + 1)): per group and pair of slots a < b that shared an
    item, sum over shared items of onehot(a's category) - onehot(b's) (K) and 1 (shared).
    A dense bincount up to ``DENSE_CELLS`` cells; above, each chunk of label pairs is reduced
    by its codes before the next (memory stays that of a chunk and of the result)."""
    k = table.counts.shape[1]
    width = k + 1
    size = groups * r * r * width
    dense = np.zeros(size) if size <= DENSE_CELLS else None
    cells_seen: list[np.ndarray] = []
    sums_seen: list[np.ndarray] = []
    # chunks of 2**20 label pairs: three codes each, 24 MB
    for i, j in within_item_pairs(table.label_item, table.starts, table.m, max_pairs=1 << 20):
        a, b = s_label[i], s_label[j]
        ca, cb = table.label_category[i], table.label_category[j]
        swap = a > b
        low, high = np.where(swap, b, a), np.where(swap, a, b)
        c_low, c_high = np.where(swap, cb, ca), np.where(swap, ca, cb)
        g = g_item[table.label_item[i]].astype(np.int64)
        if dense is not None:
            base = ((g * r + low) * r + high) * width
        else:
            base = (((low.astype(np.int64) << SHIFT) | high) * groups + g) * width
        n = base.shape[0]
        codes = np.concatenate([base + c_low, base + c_high, base + k])
        signs = np.concatenate([np.ones(n), -np.ones(n), np.ones(n)])
        if dense is not None:
            dense += np.bincount(codes, weights=signs, minlength=size)
            continue
        cells, index = np.unique(codes, return_inverse=True)
        cells_seen.append(cells)
        sums_seen.append(np.bincount(index.ravel(), weights=signs, minlength=cells.shape[0]))
    if dense is not None:
        by_pair = dense.reshape(groups, r * r, width)
        used = np.flatnonzero(np.abs(by_pair).sum(axis=(0, 2)) > 0)
        low, high = np.divmod(used, r)
        keys = (low.astype(np.int64) << SHIFT) | high
        return keys, by_pair[:, used]
    if not cells_seen:
        return np.zeros(0, dtype=np.int64), np.zeros((groups, 0, width))
    cells, index = np.unique(np.concatenate(cells_seen), return_inverse=True)
    summed = np.bincount(index.ravel(), weights=np.concatenate(sums_seen), minlength=cells.shape[0])
    pair_group, column = np.divmod(cells, width)
    pair_code, g = np.divmod(pair_group, groups)
    keys, at = np.unique(pair_code, return_inverse=True)
    out = np.zeros((groups, keys.shape[0], width))
    out[g, at.ravel(), column] = summed  # each (group, pair, column) once: cells are unique
    return keys, out


def bias_index_states(values: np.ndarray) -> np.ndarray:
    """The bias index of each state (S,) from its pair differences (S, P, K + 1): half the sum
    of |D| over pairs and categories over the shared items (``reading.bias_index``)."""
    shared = values[..., -1].sum(axis=-1)
    spread = 0.5 * np.abs(values[..., :-1]).sum(axis=(-2, -1))
    return np.where(shared > 0, spread / np.maximum(shared, 1.0), np.nan)


def decode(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return keys >> SHIFT, keys & MASK
