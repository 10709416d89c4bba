"""A candidate against the fixed group: Shah's S (Eq. 6-8) and Vanbelle-Albert kappa_VA.

References: Shah (2011), Section 3; Vanbelle and Albert (2009), "Agreement between an isolated
rater and a group of raters", Statistica Neerlandica 63(1), unweighted form. Both are scored on
the candidate's items that are pairable within the group. The group's rater biases v are the
project's (estimated once over the full group's pairable items), so every candidate is judged
against the same chance model.
"""

from __future__ import annotations

import numpy as np

from auditor.stats.intervals import jackknife
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


def leave_one_out_s(
    table: GroupTable, bias: np.ndarray, summed: np.ndarray, squares: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """S of every human rater against the others, on its items with m_u >= 3.

    bias : v (R, K); summed, squares : sums over raters present of v_pc and v_pc^2, (N, K).
    Returns (S (R,) NaN where undefined, item counts (R,)).

    Without rater p on item u the group counts are c_u - e_{c_p} and the chance terms use
    s_uc - v_pc and s2_uc - v_pc^2, so p's summed chance on category c is
    A_pc - 2 v_pc B_pc + 2 v_pc^2 C_p with A, B, C sums over p's items of per-item values:
    one product with the presence matrix instead of a pass over labels per category.
    """
    n_raters, k = bias.shape
    m = table.m
    n_items = m.shape[0]
    inverse = np.zeros(n_items)
    three = m >= 3
    inverse[three] = 1.0 / ((m[three] - 1) * (m[three] - 2))
    # Per (item, category) values of a label with that category; items with m_u = 2 get 0.
    # (N, K) temporaries are released as soon as they are used: at 10M labels each is ~40 MB.
    agree = table.counts * (table.counts - 1)
    best_category = agree.argmax(axis=1)
    best = agree.max(axis=1)
    agree[np.arange(n_items), best_category] = -1
    second = agree.max(axis=1)
    del agree
    best_uc = np.where(
        best_category[:, None] == np.arange(k)[None, :], second[:, None], best[:, None]
    ).astype(float)
    own = ((table.counts - 1) * (table.counts - 2)).astype(float)  # pairs left without p
    np.maximum(best_uc, own, out=best_uc)
    best_uc *= inverse[:, None]
    own *= inverse[:, None]
    observed_uc = own.ravel()
    best_uc = best_uc.ravel()
    code = table.label_code
    rater = table.label_rater
    observed = np.bincount(rater, weights=observed_uc[code], minlength=n_raters)
    amax = np.bincount(rater, weights=best_uc[code], minlength=n_raters)
    # p's labels on items with m_u >= 3: all its pairable labels minus those on m_u = 2 items
    two = np.flatnonzero(m == 2)
    first_two = np.concatenate([table.starts[two], table.starts[two] + 1])
    share = table.rater_counts - np.bincount(
        rater[first_two] * k + table.label_category[first_two], minlength=n_raters * k
    ).reshape(n_raters, k)
    n = share.sum(axis=1).astype(float)
    per_item = np.empty((n_items, 2 * k + 1))
    np.multiply(summed, summed, out=per_item[:, :k])
    per_item[:, :k] -= squares
    per_item[:, :k] *= inverse[:, None]
    np.multiply(summed, inverse[:, None], out=per_item[:, k : 2 * k])
    per_item[:, 2 * k] = inverse
    sums = table.sum_over_items(per_item)
    del per_item
    chance_by = sums[:, :k] - 2.0 * bias * sums[:, k : 2 * k] + 2.0 * bias**2 * sums[:, 2 * k :]
    ae = safe_ratio((share * chance_by).sum(axis=1), n**2)
    return s_from(safe_ratio(observed, n), ae, safe_ratio(amax, n)), n.astype(np.int64)


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
    """Jackknife intervals of every human rater's S against the others, (low, high) each (R,).

    Deleting an item the rater did not label leaves its S unchanged (the biases v are fixed),
    so the delete-one values run over the rater's own items: per label l the features
    [1, Ao_l, Amax_l, onehot(c_l), Ae_l(c)] are subtracted from the rater's totals. Ao_l and
    Amax_l are looked up in (N, K) tables by the label's (item, category); only Ae_l (labels
    of one rater, K) is materialised. One rater at a time keeps memory at O(labels of one
    rater * K). NaN where undefined.
    """
    n_raters, k = bias.shape
    m = table.m
    low, high = np.full(n_raters, np.nan), np.full(n_raters, np.nan)
    inverse = np.zeros(m.shape[0])
    three = m >= 3
    inverse[three] = 1.0 / ((m[three] - 1) * (m[three] - 2))
    own_left = ((table.counts - 1) * (table.counts - 2)).astype(float).ravel()
    best_left = _best_left(table.counts).ravel()
    rater = table.label_rater
    if n_raters < np.iinfo(np.int16).max:
        rater = rater.astype(np.int16)  # a stable sort of 16-bit keys is a radix sort
    order = np.argsort(rater, kind="stable")
    del rater
    bounds = np.searchsorted(table.label_rater[order], np.arange(n_raters + 1))
    for p in range(n_raters):  # bounded by the number of raters
        mine = order[bounds[p] : bounds[p + 1]]
        mine = mine[three[table.label_item[mine]]]
        if mine.shape[0] < 2:
            continue
        item, given = table.label_item[mine], table.label_category[mine]
        code = table.label_code[mine]
        weight = inverse[item]
        ao = own_left[code] * weight
        amax = best_left[code] * weight
        own = bias[p][None, :]
        chance = summed[item]
        chance -= own
        np.square(chance, out=chance)
        left_squares = squares[item]
        left_squares -= own**2
        chance -= left_squares
        del left_squares
        chance *= weight[:, None]
        share = np.bincount(given, minlength=k).astype(float)
        n = float(mine.shape[0])
        totals = np.concatenate([[n, ao.sum(), amax.sum()], share, chance.sum(axis=0)])
        estimate = float(_s_of_totals(totals, k))
        if not np.isfinite(estimate):
            continue
        # (share - e_c) . (chance total - Ae_l) = (chance total - Ae_l) . share - its c entry
        np.subtract(totals[3 + k :], chance, out=chance)
        dot = chance @ share
        dot -= chance[np.arange(mine.shape[0]), given]
        del chance
        left = n - 1.0
        values = s_from(
            safe_ratio(totals[1] - ao, left),
            safe_ratio(dot, left**2),
            safe_ratio(totals[2] - amax, left),
        )
        interval = jackknife(estimate, values, level)
        if interval[0] is not None:
            low[p], high[p] = interval[0], interval[1]
    return low, high
