"""Cohen's kappa for every pair of group raters on the items both labeled (MEASURES.md 4).

Reference: Cohen (1960). All pairs at once: one ``bincount`` over the within-item label pairs
gives the K x K confusion table of every rater pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.stats.tables import GroupTable, within_item_pairs
from auditor.stats.totals import safe_ratio

_MAX_DENSE_CODES = 1 << 25


@dataclass(frozen=True)
class PairwiseCohen:
    """rater_a, rater_b : (P,) indices, a < b; n_items : (P,); kappa : (P,), NaN if undefined."""

    rater_a: np.ndarray
    rater_b: np.ndarray
    n_items: np.ndarray
    kappa: np.ndarray


def pairwise_cohen(table: GroupTable) -> PairwiseCohen:
    """Confusion tables of all rater pairs that share at least one item, and their kappas."""
    n_raters, k = table.rater_counts.shape
    size = n_raters * n_raters * k * k
    dense = size <= _MAX_DENSE_CODES
    tally = np.zeros(size if dense else 0, dtype=np.int64)
    codes_seen: list[np.ndarray] = []
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        # labels are sorted by rater within an item, so rater[i] < rater[j]
        code = (table.label_rater[i] * n_raters + table.label_rater[j]) * (k * k) + (
            table.label_category[i] * k + table.label_category[j]
        )
        if dense:
            tally += np.bincount(code, minlength=size)
        else:
            codes_seen.append(code)
    if dense:
        cells = np.flatnonzero(tally)
        cell_counts = tally[cells]
    else:
        joined = np.concatenate(codes_seen) if codes_seen else np.zeros(0, dtype=np.int64)
        cells, cell_counts = np.unique(joined, return_counts=True)
    pair_code, pair_index = np.unique(cells // (k * k), return_inverse=True)
    confusion = np.zeros((pair_code.shape[0], k * k))
    confusion[pair_index, cells % (k * k)] = cell_counts
    confusion = confusion.reshape(-1, k, k)
    n = confusion.sum(axis=(1, 2))
    observed = np.trace(confusion, axis1=1, axis2=2) / n
    chance = (confusion.sum(axis=2) * confusion.sum(axis=1)).sum(axis=1) / n**2
    return PairwiseCohen(
        rater_a=pair_code // n_raters,
        rater_b=pair_code % n_raters,
        n_items=n.astype(np.int64),
        kappa=safe_ratio(observed - chance, 1.0 - chance),
    )
