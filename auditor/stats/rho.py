"""rho: inter-rater agreement weighted by each rater's reliability (MEASURES.md section 9).

Reference: Cabitza et al., the self-agreement and rho paper (seeds), Eq. 2-5. The genuine
agreement effect of two raters agreeing on category c factorises into one factor per rater,

    approximate: g_p(c) = Y_p / (Y_p + P_c x_p),   exact: e_p(c) = y_p(c) / (y_p(c) + P_c x_p),

so the sum over the agreeing unordered pairs of an item is sum_c ((sum g)^2 - sum g^2) / 2 over
the raters who gave c: one ``bincount`` per statistic, no enumeration of pairs. In exact mode a
pair in which either rater has a zero exact denominator falls back to the approximate effect:

    pairs = all pairs (approximate) - pairs of exact-ready raters (approximate)
            + pairs of exact-ready raters (exact).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.domain import RhoMode, RhoUnrated
from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, mean_of


@dataclass(frozen=True)
class Rho:
    """rho as a mean over the items used, the fallback count, and why it may be undefined."""

    totals: ItemTotals | None
    n_items: int
    fallbacks: int
    reason: str | None


def _pair_sum(item_category: np.ndarray, size: int, factor: np.ndarray) -> np.ndarray:
    """Per (item, category) code: sum over unordered pairs of factor_i factor_j, shape (size,)."""
    first = np.bincount(item_category, weights=factor, minlength=size)
    second = np.bincount(item_category, weights=factor**2, minlength=size)
    return 0.5 * (first**2 - second)


def rho(
    table: GroupTable,
    x: np.ndarray,
    y: np.ndarray,
    rated: np.ndarray,
    prevalence: np.ndarray,
    mode: RhoMode,
    unrated: RhoUnrated,
) -> Rho:
    """rho over pairable items.

    x : (R,) chance of a random choice; y : (R, K) peaked choices; rated : (R,) bool, raters
    with repeated presentations (x, y of the others are ignored); prevalence : P (K,).
    """
    n_raters, k = y.shape
    human_rated = rated & (np.bincount(table.label_rater, minlength=n_raters) > 0)
    if not human_rated.any():
        return Rho(None, 0, 0, "no repeated presentations")
    x = x.astype(float).copy()
    y = y.astype(float).copy()
    x[~rated], y[~rated] = 0.0, 0.0
    if unrated == RhoUnrated.POOL:
        x[~rated] = x[human_rated].mean()
        y[~rated] = y[human_rated].mean(axis=0)
    elif unrated == RhoUnrated.PERFECT:
        y[~rated] = prevalence
    if unrated == RhoUnrated.EXCLUDE:
        keep = rated[table.label_rater]
        item, rater = table.label_item[keep], table.label_rater[keep]
        given, code = table.label_category[keep], table.label_code[keep]
        m = np.bincount(item, minlength=table.n_pairable)
    else:  # every group label counts: use the table's arrays without copies
        item, rater, given, code = (
            table.label_item,
            table.label_rater,
            table.label_category,
            table.label_code,
        )
        m = table.m
    used = m >= 2
    if not used.any():
        return Rho(None, 0, 0, "no item with two rated raters")
    # one factor per (rater, category), gathered once per label
    chance = x[:, None] * prevalence[None, :]  # (R, K)
    reliability = (1.0 - x)[:, None]
    approximate_table = np.divide(
        np.broadcast_to(reliability, chance.shape),
        reliability + chance,
        out=np.ones_like(chance),
        where=(reliability + chance) > 0,
    )
    rater_code = rater * k + given
    approximate = approximate_table.ravel()[rater_code]
    size = table.n_pairable * k
    pair_sum = _pair_sum(code, size, approximate)
    fallbacks = 0
    if mode == RhoMode.EXACT:
        exact_denominator = y + chance
        ready_table = exact_denominator > 0
        exact_table = np.divide(y, exact_denominator, out=np.zeros_like(y), where=ready_table)
        ready = ready_table.ravel()[rater_code]
        exact = exact_table.ravel()[rater_code]
        pair_sum += _pair_sum(code[ready], size, exact[ready])
        pair_sum -= _pair_sum(code[ready], size, approximate[ready])
        agreeing = np.bincount(code, minlength=size)
        agreeing_ready = np.bincount(code[ready], minlength=size)
        fallbacks = int(
            (agreeing * (agreeing - 1) // 2 - agreeing_ready * (agreeing_ready - 1) // 2).sum()
        )
    per_item = pair_sum.reshape(table.n_pairable, k).sum(axis=1)
    pairs = np.where(used, m * (m - 1) / 2.0, 1.0)
    return Rho(mean_of(per_item / pairs, used), int(used.sum()), fallbacks, None)
