"""rho: inter-rater agreement weighted by each rater's reliability (docs/measures.md, "Version 2").

Reference: Cabitza et al., the self-agreement and rho paper (seeds), Eq. 2-5. For raters i, j
who gave an item the same category c, GAE(i, j, c) is the chance that both answered genuinely:

    approximate: g_i(c) g_j(c),   g_p(c) = Y_p / (Y_p + P(c) x_p)
    exact:       Y_i Y_j / (Y_i Y_j + P(c) (1 - Y_i Y_j))

The approximate form factorises per rater, so the sum over the agreeing unordered pairs of an
item is sum_c ((sum g)^2 - sum g^2) / 2 over the raters who gave c: one ``bincount`` per
statistic. The exact form depends on the pair through Y_i Y_j only: per category an (R, R)
table F_c. With few raters (R <= MAX_MASK_RATERS) the set of raters who gave c to an item is a
bit mask (one ``bincount`` of 2^rater per (item, category), as cheap as the approximate form)
and the sum over its pairs is looked up in a table G_c[mask] of 2^R entries. With more raters it
is the quadratic form z' F_c z of the item's 0/1 rater vector (on dense blocks of items), or a
walk over the item's label pairs when items carry few of many raters. Per-item values are kept
(not only the R x R x K co-agreement total): the intervals resample items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.domain import RhoMode, RhoUnrated
from auditor.stats.tables import GroupTable, within_item_pairs
from auditor.stats.totals import ItemTotals, mean_of

NO_REPEATS = "no repeated presentations"
NO_PAIRABLE = "no item labeled by two raters"
NO_RATED_PAIR = "no item labeled by two raters with repeated presentations"

# Up to this many raters the exact form looks pair sums up by the bit mask of raters (2^R
# entries per category); the table costs R^2 2^R K / 2 flops once.
MAX_MASK_RATERS = 14
# Dense (items x raters) blocks for the exact form when items carry a fair share of the raters.
DENSE_OCCUPANCY = 4
CHUNK_CELLS = 1 << 21


@dataclass(frozen=True)
class Rho:
    """rho as a mean over the items used, and why it may be undefined."""

    totals: ItemTotals | None
    n_items: int
    reason: str | None
    per_item: np.ndarray | None = None  # (N,) item sums of GAE / C(m_u, 2), 0 where unused
    used: np.ndarray | None = None  # (N,) bool


def _pair_sum(item_category: np.ndarray, size: int, factor: np.ndarray) -> np.ndarray:
    """Per (item, category) code: sum over unordered pairs of factor_i factor_j, shape (size,)."""
    first = np.bincount(item_category, weights=factor, minlength=size)
    second = np.bincount(item_category, weights=factor**2, minlength=size)
    return 0.5 * (first**2 - second)


def exact_effect(product: np.ndarray, share: np.ndarray) -> np.ndarray:
    """GAE = t / (t + P (1 - t)) for t = Y_i Y_j; 0 where t = 0 (neither answered genuinely)."""
    denominator = product + share * (1.0 - product)
    result: np.ndarray = np.divide(
        product, denominator, out=np.zeros(np.broadcast(product, share).shape), where=product > 0
    )
    return result


def _exact_masks(
    code: np.ndarray,
    rater: np.ndarray,
    n_items: int,
    reliability: np.ndarray,
    prevalence: np.ndarray,
) -> np.ndarray:
    """Per-item sums of GAE over agreeing pairs from the bit mask of raters per (item, c)."""
    n_raters, k = reliability.shape[0], prevalence.shape[0]
    masks = np.arange(1 << n_raters, dtype=np.int64)
    product = np.outer(reliability, reliability)
    table = np.zeros((k, masks.shape[0]))
    for i in range(n_raters):  # bounded by R^2 / 2 rater pairs, each over the 2^R masks
        for j in range(i + 1, n_raters):
            both = ((masks >> i) & (masks >> j) & 1).astype(float)
            table += exact_effect(product[i, j], prevalence)[:, None] * both[None, :]
    # bit weights are exact in float64 (R <= 14 bits)
    mask = np.bincount(code, weights=np.left_shift(1, rater).astype(float), minlength=n_items * k)
    category = np.tile(np.arange(k, dtype=np.int64), n_items)
    result: np.ndarray = (
        table.ravel()[category * masks.shape[0] + mask.astype(np.int64)]
        .reshape(n_items, k)
        .sum(axis=1)
    )
    return result


def _exact_dense(
    item: np.ndarray,
    rater: np.ndarray,
    given: np.ndarray,
    n_items: int,
    reliability: np.ndarray,
    prevalence: np.ndarray,
) -> np.ndarray:
    """Per-item sums of GAE over agreeing pairs, from 0/1 blocks (items, R) per category."""
    n_raters, k = reliability.shape[0], prevalence.shape[0]
    product = np.outer(reliability, reliability)
    tables = [exact_effect(product, prevalence[c]) for c in range(k)]  # bounded by K
    diagonals = [np.diag(t).copy() for t in tables]
    out = np.zeros(n_items)
    step = max(1, CHUNK_CELLS // max(n_raters, 1))
    bounds = np.searchsorted(item, np.arange(0, n_items + step, step))
    for chunk, low in enumerate(range(0, n_items, step)):  # chunks bound memory
        high = min(n_items, low + step)
        first, last = bounds[chunk], bounds[chunk + 1]
        rows = item[first:last] - low
        for c in range(k):  # bounded by the number of categories
            mine = given[first:last] == c
            block = np.zeros((high - low, n_raters))
            block[rows[mine], rater[first:last][mine]] = 1.0
            quadratic = ((block @ tables[c]) * block).sum(axis=1)
            out[low:high] += 0.5 * (quadratic - block @ diagonals[c])
    return out


def _exact_pairs(
    item: np.ndarray,
    rater: np.ndarray,
    given: np.ndarray,
    m: np.ndarray,
    reliability: np.ndarray,
    prevalence: np.ndarray,
) -> np.ndarray:
    """The same sums by walking each item's label pairs (few labels per item, many raters)."""
    out = np.zeros(m.shape[0])
    starts = np.cumsum(m) - m
    for i, j in within_item_pairs(item, starts, m):  # chunks of pairs, not a loop per item
        same = given[i] == given[j]
        i, j = i[same], j[same]
        effect = exact_effect(reliability[rater[i]] * reliability[rater[j]], prevalence[given[i]])
        out += np.bincount(item[i], weights=effect, minlength=m.shape[0])
    return out


def rho(
    table: GroupTable,
    reliability: np.ndarray,
    rated: np.ndarray,
    prevalence: np.ndarray,
    mode: RhoMode,
    unrated: RhoUnrated,
) -> Rho:
    """rho over pairable items.

    reliability : Y_p (R,); rated : (R,) bool, human raters with repeated presentations (Y of
    the others is ignored); prevalence : P (K,).
    """
    k = prevalence.shape[0]
    if not rated.any():
        return Rho(None, 0, NO_REPEATS)
    if table.n_pairable == 0:
        return Rho(None, 0, NO_PAIRABLE)
    y = fill_unrated(reliability, rated, unrated)
    item, rater, given, code, m = labels_used(table, rated, unrated)
    used = m >= 2
    if not used.any():
        return Rho(None, 0, NO_RATED_PAIR)
    if mode == RhoMode.EXACT:
        n_raters = y.shape[0]
        if n_raters <= MAX_MASK_RATERS:
            per_item = _exact_masks(code, rater, table.n_pairable, y, prevalence)
        elif table.n_pairable * n_raters <= DENSE_OCCUPANCY * item.shape[0]:
            per_item = _exact_dense(item, rater, given, table.n_pairable, y, prevalence)
        else:
            per_item = _exact_pairs(item, rater, given, m, y, prevalence)
    else:
        # one factor per (rater, category), gathered once per label
        chance = (1.0 - y)[:, None] * prevalence[None, :]  # (R, K): P(c) x_p
        genuine = np.broadcast_to(y[:, None], chance.shape)
        factor = np.divide(
            genuine, genuine + chance, out=np.zeros_like(chance), where=genuine > 0
        ).ravel()[rater * k + given]
        per_item = _pair_sum(code, table.n_pairable * k, factor)
        per_item = per_item.reshape(table.n_pairable, k).sum(axis=1)
    pairs = np.where(used, m * (m - 1) / 2.0, 1.0)
    per_item = np.where(used, per_item / pairs, 0.0)
    return Rho(mean_of(per_item, used), int(used.sum()), None, per_item, used)


def fill_unrated(reliability: np.ndarray, rated: np.ndarray, unrated: RhoUnrated) -> np.ndarray:
    """Y (R,) with the raters without repeats set by the ``rho_unrated`` policy."""
    y = np.where(rated, reliability, 0.0).astype(float)
    if unrated == RhoUnrated.POOL:  # x = mean x over raters with repeats: Y = mean Y
        y[~rated] = reliability[rated].mean()
    elif unrated == RhoUnrated.PERFECT:
        y[~rated] = 1.0
    return y


def labels_used(
    table: GroupTable, rated: np.ndarray, unrated: RhoUnrated
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(item, rater, category, code, m) of the labels rho counts: ``exclude`` drops unrated."""
    if unrated == RhoUnrated.EXCLUDE:
        keep = rated[table.label_rater]
        item = table.label_item[keep]
        m = np.bincount(item, minlength=table.n_pairable)
        return item, table.label_rater[keep], table.label_category[keep], table.label_code[keep], m
    # every group label counts: the table's arrays without copies
    return table.label_item, table.label_rater, table.label_category, table.label_code, table.m


def co_agreement(table: GroupTable, rated: np.ndarray, unrated: RhoUnrated, k: int) -> np.ndarray:
    """N (K, R, R): sum over used items of [i and j both gave c] / C(m_u, 2); zero diagonal.

    rho's item sum is sum_c sum_{i<j} N_cij GAE(i, j, c), so with N the sum can be evaluated
    at any Y and P in O(K R^2): the resampling re-estimates Y without a pass over the labels.
    """
    item, rater, given, code, m = labels_used(table, rated, unrated)
    n_raters, n = rated.shape[0], table.n_pairable
    weight = np.where(m >= 2, 2.0 / np.maximum(m * (m - 1), 1), 0.0)
    out = np.zeros((k, n_raters, n_raters))
    if n_raters <= MAX_MASK_RATERS:
        mask = np.bincount(code, weights=np.left_shift(1, rater).astype(float), minlength=n * k)
        category = np.tile(np.arange(k, dtype=np.int64), n)
        size = 1 << n_raters
        by_mask = np.bincount(
            category * size + mask.astype(np.int64),
            weights=np.repeat(weight, k),
            minlength=k * size,
        ).reshape(k, size)
        masks = np.arange(size, dtype=np.int64)
        for i in range(n_raters):  # bounded by R^2 / 2 rater pairs over the 2^R masks
            for j in range(i + 1, n_raters):
                both = ((masks >> i) & (masks >> j) & 1).astype(float)
                out[:, i, j] = out[:, j, i] = by_mask @ both
        return out
    starts = np.cumsum(m) - m
    flat = np.zeros(k * n_raters * n_raters)
    for first, second in within_item_pairs(item, starts, m):  # chunks of pairs, not per item
        same = given[first] == given[second]
        first, second = first[same], second[same]
        flat += np.bincount(
            (given[first] * n_raters + rater[first]) * n_raters + rater[second],
            weights=weight[item[first]],
            minlength=flat.shape[0],
        )
    out = flat.reshape(k, n_raters, n_raters)
    return out + out.transpose(0, 2, 1)


def evaluate(pairs: np.ndarray, y: np.ndarray, shares: np.ndarray, mode: RhoMode) -> np.ndarray:
    """rho's item sum from the co-agreement table ``pairs`` (K, R, R) at Y (b, R), P (b, K)."""
    if mode == RhoMode.EXACT:
        product = y[:, :, None] * y[:, None, :]
        out = np.zeros(y.shape[0])
        for c in range(pairs.shape[0]):  # bounded by the number of categories
            effect = exact_effect(product, shares[:, c, None, None])
            out += 0.5 * (effect * pairs[c][None]).sum(axis=(1, 2))
        return out
    genuine = np.broadcast_to(y[:, :, None], (y.shape[0], y.shape[1], shares.shape[1]))
    denominator = genuine + shares[:, None, :] * (1.0 - genuine)
    g = np.divide(genuine, denominator, out=np.zeros(genuine.shape), where=genuine > 0)
    per_category = np.ascontiguousarray(g.transpose(2, 0, 1))  # (K, b, R)
    result: np.ndarray = 0.5 * (per_category * (per_category @ pairs)).sum(axis=(0, 2))
    return result
