"""Expected agreement of independent classifiers and its repeatability / rater-effect split.

Reference: Bashkansky and Marmor (ENBIS 2025 slides, seeds); MEASURES.md section 10. On an item
seen by L >= 2 group raters with category distributions P_l (from the rater's repeats, or one-hot
from a single label) and pbar = mean_l P_l:

    Repeatability_u = K/(K-1) (1 - mean_l sum_c P_l(c)^2)
    RaterEffect_u   = K/(K-1) (mean_l sum_c P_l(c)^2 - sum_c pbar(c)^2)     (population variance)
    kappa_u         = 1 - Repeatability_u - L/(L-1) RaterEffect_u

Project values are means over items, so each is ``mean_of`` a per-item value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.stats.tables import Cells, GroupTable
from auditor.stats.totals import ItemTotals, mean_of


@dataclass(frozen=True)
class Split:
    expected_agreement: ItemTotals
    repeatability: ItemTotals
    rater_effect: ItemTotals


def split_per_item(
    distribution_sum: np.ndarray, square_sum: np.ndarray, raters: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """kappa_u, Repeatability_u, RaterEffect_u from per-item sums.

    distribution_sum : sum_l P_l, shape (N, K); square_sum : sum_l sum_c P_l(c)^2, (N,);
    raters : L, (N,) with L >= 2.
    """
    k = distribution_sum.shape[1]
    scale = k / (k - 1)
    mean_square = square_sum / raters
    pbar = distribution_sum / raters[:, None]
    repeatability = scale * (1.0 - mean_square)
    effect = scale * (mean_square - (pbar**2).sum(axis=1))
    kappa = 1.0 - repeatability - raters / (raters - 1.0) * effect
    return kappa, repeatability, effect


def split(table: GroupTable, cells: Cells) -> Split:
    """Per pairable item from the group's cells, repeated cells using all their labels."""
    n, k = table.counts.shape
    distribution = table.counts.astype(float)
    squares = table.m.astype(float)
    # repeated cells of the group on pairable items: replace their one-hot by their shares
    # label_cell is ascending: find each repeated cell among the group's labels
    where = np.searchsorted(table.label_cell, cells.repeat_cell)
    where = np.minimum(where, max(table.label_cell.shape[0] - 1, 0))
    group = (
        table.label_cell[where] == cells.repeat_cell
        if table.label_cell.shape[0]
        else np.zeros(cells.repeat_cell.shape[0], dtype=bool)
    )
    if group.any():
        label = where[group]
        counts = cells.repeat_counts[group]
        shares = counts / counts.sum(axis=1, keepdims=True)
        item = table.label_item[label]
        np.add.at(distribution, (item, table.label_category[label]), -1.0)
        for c in range(k):  # bounded by the number of categories
            distribution[:, c] += np.bincount(item, weights=shares[:, c], minlength=n)
        squares -= np.bincount(item, weights=1.0 - (shares**2).sum(axis=1), minlength=n)
    kappa, repeatability, effect = split_per_item(distribution, squares, table.m.astype(float))
    return Split(mean_of(kappa), mean_of(repeatability), mean_of(effect))
