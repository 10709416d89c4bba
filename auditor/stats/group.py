"""A candidate against the fixed group: Shah's S (Eq. 6-8) and Vanbelle-Albert kappa_VA.

References: Shah (2011), Section 3; Vanbelle and Albert (2009), "Agreement between an isolated
rater and a group of raters", Statistica Neerlandica 63(1), unweighted form. Both are scored on
the candidate's items that are pairable within the group. The group's rater biases v are the
project's (estimated once over the full group's pairable items), so every candidate is judged
against the same chance model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.stats.intervals import jackknife_from_spread
from auditor.stats.tables import Cells, GroupTable
from auditor.stats.totals import EPS, ItemTotals, safe_ratio


def s_from(ao: np.ndarray, ae: np.ndarray, amax: np.ndarray) -> np.ndarray:
    """S = (Ao - Ae) / (Amax - Ae), NaN unless the group agrees beyond chance (Amax > Ae).

    With Amax <= Ae the scale has no room (Amax = Ae) or is inverted; when the group never
    agrees (Amax = 0) S would read 1 for any candidate. Shah (2011, Section 4.1): agreement with
    a group that does not agree with itself is meaningless.
    """
    room = amax - ae
    return np.where(room > EPS, safe_ratio(ao - ae, np.where(room > EPS, room, 1.0)), np.nan)


def _s_from(totals: np.ndarray) -> np.ndarray:
    k = (totals.shape[-1] - 3) // 2
    n, ao, amax = totals[..., 0], totals[..., 1], totals[..., 2]
    share = totals[..., 3 : 3 + k]
    chance = totals[..., 3 + k :]
    ae = safe_ratio((share * chance).sum(axis=-1), n**2)
    return s_from(safe_ratio(ao, n), ae, safe_ratio(amax, n))


def _va_from(totals: np.ndarray) -> np.ndarray:
    k = (totals.shape[-1] - 3) // 2
    n, po, pm = totals[..., 0], totals[..., 1], totals[..., 2]
    given, proportion = totals[..., 3 : 3 + k], totals[..., 3 + k :]
    pe = safe_ratio((given * proportion).sum(axis=-1), n**2)
    return safe_ratio(safe_ratio(po, n) - pe, safe_ratio(pm, n) - pe)


def candidate_items(cells: Cells, table: GroupTable, rater: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions among pairable items (ascending) and categories of ``rater``'s labels there."""
    mine = np.flatnonzero(cells.rater == rater)
    position = np.searchsorted(table.items, cells.item[mine])
    position = np.minimum(position, max(table.n_pairable - 1, 0))
    on_pairable = (
        table.items[position] == cells.item[mine]
        if table.n_pairable
        else np.zeros(mine.shape, bool)
    )
    return position[on_pairable], cells.category[mine][on_pairable]


def model_scores(
    table: GroupTable, chance: np.ndarray, position: np.ndarray, category: np.ndarray
) -> tuple[ItemTotals, ItemTotals]:
    """S and kappa_VA of one candidate as ``ItemTotals`` over the N pairable items.

    chance : Ae_u(c), shape (N, K). position, category : the candidate's items and labels.
    Items the candidate did not label have zero features, so resampling pairable items works.
    """
    n, k = table.counts.shape
    pair_agree = table.counts * (table.counts - 1) / (table.m * (table.m - 1))[:, None]
    onehot = np.zeros((position.shape[0], k))
    onehot[np.arange(position.shape[0]), category] = 1.0
    s_features = np.zeros((n, 3 + 2 * k))
    s_features[position, 0] = 1.0
    s_features[position, 1] = pair_agree[position, category]
    s_features[position, 2] = pair_agree[position].max(axis=1)
    s_features[position, 3 : 3 + k] = onehot
    s_features[position, 3 + k :] = chance[position]
    proportion = table.counts / table.m[:, None]
    va_features = np.zeros((n, 3 + 2 * k))
    va_features[position, 0] = 1.0
    va_features[position, 1] = proportion[position, category]
    va_features[position, 2] = proportion[position].max(axis=1)
    va_features[position, 3 : 3 + k] = onehot
    va_features[position, 3 + k :] = proportion[position]
    used = s_features[:, 0] > 0
    return ItemTotals(s_features, _s_from, used), ItemTotals(va_features, _va_from, used)


# Labels per pass of the per-rater jackknife: bounds its (labels, ) temporaries (8 MB each).
LABEL_CHUNK = 1 << 20


@dataclass(frozen=True)
class AgainstGroup:
    """Every human rater's S against the others, with its jackknife interval (NaN where none).

    value, low, high : (R,) float; n : (R,) items used (labels on items with m_u >= 3).
    """

    value: np.ndarray
    n: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _without_rater(table: GroupTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (item, category), flat (N K,): a label's Ao and Amax on its item once the label's
    rater is removed, each over (m_u - 1)(m_u - 2) pairs (0 on items with m_u = 2); and the
    inverse 1 / ((m_u - 1)(m_u - 2)) per item (N,), 0 where m_u = 2."""
    m = table.m
    inverse = np.zeros(m.shape[0])
    three = m >= 3
    inverse[three] = 1.0 / ((m[three] - 1) * (m[three] - 2))
    # (N, K) temporaries are released as soon as they are used: at 10M labels each is ~40 MB.
    best = _best_left(table.counts)
    best *= inverse[:, None]
    own = ((table.counts - 1) * (table.counts - 2)).astype(float)  # pairs left without p
    own *= inverse[:, None]
    return own.ravel(), best.ravel(), inverse


def _totals(
    table: GroupTable,
    bias: np.ndarray,
    summed: np.ndarray,
    squares: np.ndarray,
    lookups: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """Per rater, totals [n, Ao sum, Amax sum, share (K), chance (K)] (R, 3 + 2K) over its
    labels on items with m_u >= 3.

    Without rater p on item u the group counts are c_u - e_{c_p} and the chance terms use
    s_uc - v_pc and s2_uc - v_pc^2, so p's summed chance on category c is
    A_pc - 2 v_pc B_pc + 2 v_pc^2 C_p with A, B, C sums over p's items of per-item values:
    one product with the presence matrix instead of a pass over labels per category.
    """
    n_raters, k = bias.shape
    observed_uc, best_uc, inverse = lookups
    m = table.m
    code = table.label_code
    rater = table.label_rater
    totals = np.empty((n_raters, 3 + 2 * k))
    totals[:, 1] = np.bincount(rater, weights=observed_uc[code], minlength=n_raters)
    totals[:, 2] = np.bincount(rater, weights=best_uc[code], minlength=n_raters)
    # p's labels on items with m_u >= 3: all its pairable labels minus those on m_u = 2 items
    two = np.flatnonzero(m == 2)
    first_two = np.concatenate([table.starts[two], table.starts[two] + 1])
    share = table.rater_counts - np.bincount(
        rater[first_two] * k + table.label_category[first_two], minlength=n_raters * k
    ).reshape(n_raters, k)
    totals[:, 3 : 3 + k] = share
    totals[:, 0] = share.sum(axis=1)
    per_item = np.empty((m.shape[0], 2 * k + 1))
    np.multiply(summed, summed, out=per_item[:, :k])
    per_item[:, :k] -= squares
    per_item[:, :k] *= inverse[:, None]
    np.multiply(summed, inverse[:, None], out=per_item[:, k : 2 * k])
    per_item[:, 2 * k] = inverse
    sums = table.sum_over_items(per_item)
    del per_item
    totals[:, 3 + k :] = (
        sums[:, :k] - 2.0 * bias * sums[:, k : 2 * k] + 2.0 * bias**2 * sums[:, 2 * k :]
    )
    return totals


def leave_one_out_s(
    table: GroupTable, bias: np.ndarray, summed: np.ndarray, squares: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """S of every human rater against the others, on its items with m_u >= 3.

    bias : v (R, K); summed, squares : sums over raters present of v_pc and v_pc^2, (N, K).
    Returns (S (R,) NaN where undefined, item counts (R,)).
    """
    result = against_group(table, bias, summed, squares, None)
    return result.value, result.n


def _s_of_totals(totals: np.ndarray, k: int) -> np.ndarray:
    """S from totals [n, Ao sum, Amax sum, share (K), chance (K)] of shape (..., 3 + 2K)."""
    n = totals[..., 0]
    ae = safe_ratio((totals[..., 3 : 3 + k] * totals[..., 3 + k :]).sum(axis=-1), n**2)
    return s_from(safe_ratio(totals[..., 1], n), ae, safe_ratio(totals[..., 2], n))


def _best_left(counts: np.ndarray) -> np.ndarray:
    """Per (item, category), the most agreeing pairs of one category once a label of that
    category is removed: max(max over other c' of c_uc' (c_uc' - 1), (c_uc - 1)(c_uc - 2)),
    shape (N, K) float (exact integers)."""
    n_items, k = counts.shape
    agree = counts * (counts - 1)
    best_category = agree.argmax(axis=1)
    best = agree.max(axis=1)
    agree[np.arange(n_items), best_category] = -1
    second = agree.max(axis=1)
    del agree
    left = np.where(
        best_category[:, None] == np.arange(k)[None, :], second[:, None], best[:, None]
    ).astype(float)
    np.maximum(left, (counts - 1) * (counts - 2), out=left)
    result: np.ndarray = left
    return result


def leave_one_out_s_intervals(
    table: GroupTable,
    bias: np.ndarray,
    summed: np.ndarray,
    squares: np.ndarray,
    level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Jackknife intervals of every human rater's S against the others, (low, high) each (R,)."""
    result = against_group(table, bias, summed, squares, level)
    return result.low, result.high


def against_group(
    table: GroupTable,
    bias: np.ndarray,
    summed: np.ndarray,
    squares: np.ndarray,
    level: float | None,
) -> AgainstGroup:
    """S of every human rater against the others, and its jackknife interval at ``level``
    (None: no interval).

    Deleting an item the rater did not label leaves its S unchanged (the biases v are fixed),
    so the delete-one values run over the rater's own items: per label l the features
    [1, Ao_l, Amax_l, onehot(c_l), Ae_l(c)] are subtracted from the rater's totals. With
    Ae_l(c) = w_u [E_uc - 2 v_pc s_uc + 2 v_pc^2] (E = s^2 - s2, w_u the inverse pair count),
    the one product that needs the label's K chance terms,

        (T_p - Ae_l) . (share_p - e_c) = T_p . (share_p - e_c)
            - w_u [E_u . share_p - 2 s_u . (v_p share_p) + 2 v_p^2 . share_p - Ae_l(c) / w_u],

    takes an (item, rater) product and (item, category) and (rater, category) lookups: no
    (labels, K) array. The per-rater means and spreads are bincounts over the labels.
    """
    n_raters, k = bias.shape
    lookups = _without_rater(table)
    totals = _totals(table, bias, summed, squares, lookups)
    n = totals[:, 0]
    estimate = _s_of_totals(totals, k)
    low, high = np.full(n_raters, np.nan), np.full(n_raters, np.nan)
    result = AgainstGroup(estimate, n.astype(np.int64), low, high)
    usable = (n >= 2) & np.isfinite(estimate)
    if level is None or not usable.any():
        return result
    observed_uc, best_uc, inverse = lookups
    share, chance = totals[:, 3 : 3 + k], totals[:, 3 + k :]
    # Per label l of rater p with category c on item u, with r = 1 / (n_p - 1):
    #   dot_l = (T_p - Ae_l) . (share_p - e_c)
    #         = T_p . (share_p - e_c) - w_u [E_u . share_p - 2 s_u . (v_p share_p)
    #           + 2 v_p^2 . share_p] + w_u E_uc - 2 v_pc w_u s_uc + 2 v_pc^2 w_u
    #   value_l = (Ao_p - ao_l - r dot_l) / (Amax_p - amax_l - r dot_l)
    # Each term is looked up in one table by (item, category), by (rater, category) or by
    # (item, rater): three row lookups per label.
    excess = summed**2 - squares
    # columns apart: a lookup of one float per label is several times cheaper than of a row
    by_uc = (
        observed_uc,
        best_uc,
        (excess * inverse[:, None]).ravel(),
        (summed * inverse[:, None]).ravel(),
        np.repeat(inverse, k),
    )
    left = np.maximum(n - 1.0, 1.0)
    rate = np.repeat(1.0 / left, k)
    by_pc = (
        ((chance * share).sum(axis=1)[:, None] - chance).ravel() * rate,
        2.0 * bias.ravel() ** 2 * rate,
        2.0 * bias.ravel() * rate,
        np.repeat(totals[:, 1], k),
        np.repeat(totals[:, 2], k),
        rate,
    )
    by_item = np.hstack([excess, summed, np.ones((excess.shape[0], 1))]) * inverse[:, None]
    by_rater = np.column_stack([share, -2.0 * bias * share, 2.0 * (bias**2 * share).sum(axis=1)])
    by_rater /= left[:, None]
    # dense table: one (N, R) product, the size of the presence matrix
    product = (by_item @ by_rater.T).ravel() if table.presence is not None else None
    n_labels = table.label_item.shape[0]
    values = np.empty(n_labels)
    for first in range(0, n_labels, LABEL_CHUNK):  # chunks bound memory; not a loop per label
        last = min(first + LABEL_CHUNK, n_labels)
        item, rater = table.label_item[first:last], table.label_rater[first:last]
        code = table.label_code[first:last]
        rc = rater * k
        rc += table.label_category[first:last]
        if product is None:
            shift = np.einsum("lf,lf->l", by_item[item], by_rater[rater])
        else:
            shift = product[item * n_raters + rater]
        # shift = -r dot_l, r folded into the (rater, category) and (item, rater) terms
        weight = by_uc[4][code]
        shift -= by_pc[0][rc]
        shift -= by_pc[1][rc] * weight
        shift += by_pc[2][rc] * by_uc[3][code]
        shift -= by_uc[2][code] * by_pc[5][rc]
        numerator = by_pc[3][rc]
        numerator -= by_uc[0][code]
        numerator += shift
        denominator = by_pc[4][rc]
        denominator -= by_uc[1][code]
        denominator += shift
        # S is undefined when the room Amax' - Ae' = r (Amax_p - amax_l - r dot_l) vanishes
        room = denominator * by_pc[5][rc] > EPS
        chunk = values[first:last]
        np.divide(numerator, denominator, out=chunk, where=room)
        chunk[~room] = np.nan
        chunk[weight == 0] = 0.0  # labels on items with m_u = 2 do not count
    rater = table.label_rater
    broken = np.bincount(rater, weights=~np.isfinite(values), minlength=n_raters)
    mean = np.bincount(rater, weights=values, minlength=n_raters) / np.maximum(n, 1.0)
    counted = inverse[table.label_item] > 0
    values -= mean[rater]
    values[~counted] = 0.0
    np.square(values, out=values)
    spread = np.bincount(rater, weights=values, minlength=n_raters)
    del values
    usable &= broken == 0
    for p in np.flatnonzero(usable):  # bounded by the number of raters
        interval = jackknife_from_spread(float(estimate[p]), float(spread[p]), int(n[p]), level)
        if interval[0] is not None:
            low[p], high[p] = interval[0], interval[1]
    return result
