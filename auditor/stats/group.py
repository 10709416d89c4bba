"""A candidate against the fixed group: Shah's S (Eq. 6-8) and Vanbelle-Albert kappa_VA.

References: Shah (2011), Section 3; Vanbelle and Albert (2009), "Agreement between an isolated
rater and a group of raters", Statistica Neerlandica 63(1), unweighted form. Both are scored on
the candidate's items that are pairable within the group. The group's rater biases v are the
project's (estimated once over the full group's pairable items), so every candidate is judged
against the same chance model.
"""

from __future__ import annotations

import itertools
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


# Labels per pass of the per-rater jackknife: its (chunk,) temporaries (512 kB each) stay in
# cache, several times faster than passes over all labels.
LABEL_CHUNK = 1 << 16


@dataclass(frozen=True)
class AgainstGroup:
    """Every human rater's S against the others, with its jackknife interval (NaN where none).

    value, low, high : (R,) float; n : (R,) items used (labels on items with m_u >= 3).
    """

    value: np.ndarray
    n: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _label_chunks(table: GroupTable) -> list[tuple[int, int]]:
    """Label ranges [first, last) of about ``LABEL_CHUNK`` labels that start at an item's
    first label (so a complete item grid needs no lookup of its (item, rater) products)."""
    n_labels = table.label_item.shape[0]
    first_item = np.searchsorted(table.starts, np.arange(LABEL_CHUNK, n_labels, LABEL_CHUNK))
    # sorted already; a bound found twice gives an empty range, dropped below (np.unique
    # would import numpy.ma, 10 ms of a one-shot `auditor stats`)
    bounds = table.starts[first_item[first_item < table.starts.shape[0]]]
    edges = [0, *(int(b) for b in bounds if 0 < b < n_labels), n_labels]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def _without_rater(table: GroupTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (item, category), flat (N K,): a label's Ao and Amax on its item once the label's
    rater is removed, each over (m_u - 1)(m_u - 2) pairs (0 on items with m_u = 2); and the
    inverse 1 / ((m_u - 1)(m_u - 2)) per item (N,), 0 where m_u = 2."""
    m = table.m
    inverse = np.zeros(m.shape[0])
    three = m >= 3
    inverse[three] = 1.0 / ((m[three] - 1) * (m[three] - 2))
    # (N, K) temporaries are released as soon as they are used: at 10M labels each is ~40 MB.
    counts = table.counts.astype(float)
    own = (counts - 1.0) * (counts - 2.0)  # pairs left without p
    best = _best_left(counts, own)
    del counts
    best *= inverse[:, None]
    own *= inverse[:, None]
    return own.ravel(), best.ravel(), inverse


def _totals(
    table: GroupTable,
    bias: np.ndarray,
    summed: np.ndarray,
    squares: np.ndarray,
    lookups: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rater, totals [n, Ao sum, Amax sum, share (K), chance (K)] (R, 3 + 2K) over its
    labels on items with m_u >= 3; and w_u (s_u^2 - s2_u), w_u s_u (N, K) (w_u the lookups'
    inverse pair count).

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
    totals[:, 1:3] = 0.0
    for first in range(0, code.shape[0], LABEL_CHUNK):  # chunks stay in cache
        chunk, mine = code[first : first + LABEL_CHUNK], rater[first : first + LABEL_CHUNK]
        totals[:, 1] += np.bincount(mine, weights=observed_uc[chunk], minlength=n_raters)
        totals[:, 2] += np.bincount(mine, weights=best_uc[chunk], minlength=n_raters)
    # p's labels on items with m_u >= 3: all its pairable labels minus those on m_u = 2 items
    two = np.flatnonzero(m == 2)
    first_two = np.concatenate([table.starts[two], table.starts[two] + 1])
    share = table.rater_counts - np.bincount(
        rater[first_two] * k + table.label_category[first_two], minlength=n_raters * k
    ).reshape(n_raters, k)
    totals[:, 3 : 3 + k] = share
    totals[:, 0] = share.sum(axis=1)
    # w_u (s_u^2 - s2_u) and w_u s_u (N, K), kept for the jackknife's per-label terms
    excess = summed * summed
    excess -= squares
    excess *= inverse[:, None]
    scaled = summed * inverse[:, None]
    totals[:, 3 + k :] = table.sum_over_items(excess)
    totals[:, 3 + k :] -= 2.0 * bias * table.sum_over_items(scaled)
    totals[:, 3 + k :] += 2.0 * bias**2 * table.sum_over_items(inverse[:, None])
    return totals, excess, scaled


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


def _best_left(counts: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Per (item, category), the most agreeing pairs of one category once a label of that
    category is removed: max(max over other c' of c_uc' (c_uc' - 1), (c_uc - 1)(c_uc - 2)),
    shape (N, K) float (exact integers). counts : c_uc as float; own : (c_uc - 1)(c_uc - 2).

    A label of a category below the item's best leaves the best in place; one of a best
    category leaves the larger of the second best (the best again on a tie) and its own.
    """
    agree = counts * (counts - 1.0)
    best = agree[:, 0].copy()
    second = np.full(best.shape[0], -1.0)
    for c in range(1, counts.shape[1]):  # bounded by the number of categories
        np.maximum(second, np.minimum(best, agree[:, c]), out=second)
        np.maximum(best, agree[:, c], out=best)
    left: np.ndarray = np.maximum(second[:, None], own)
    np.copyto(left, best[:, None], where=agree < best[:, None])
    return left


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
    totals, excess, scaled = _totals(table, bias, summed, squares, lookups)
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
    # Each term is looked up by (item, category), (rater, category), rater or (item, rater),
    # one float at a time (several times cheaper than a row), in label chunks that stay in
    # cache.
    by_uc = (observed_uc, best_uc, excess.ravel(), scaled.ravel())
    left = np.maximum(n - 1.0, 1.0)
    rate = 1.0 / left
    base = ((chance * share).sum(axis=1)[:, None] - chance) * rate[:, None]
    by_pc = (
        (totals[:, 1:2] - base).ravel(),  # Ao_p - r T_p . (share_p - e_c)
        (totals[:, 2:3] - base).ravel(),  # Amax_p - r T_p . (share_p - e_c)
        (2.0 * bias * rate[:, None]).ravel(),
        (-2.0 * bias**2 * rate[:, None]).ravel(),
    )
    per_rater = (share * rate[:, None], -2.0 * bias * share * rate[:, None])
    constant = 2.0 * (bias**2 * share).sum(axis=1) * rate
    n_labels = table.label_item.shape[0]
    skipped = bool((table.m == 2).any())  # labels on items with m_u = 2 do not count
    values = np.empty(n_labels)
    sums, room_lacking = np.zeros(n_raters), np.zeros(n_raters)
    # a room below this on some label of the chunk calls for the exact test per label
    suspect = 2.0 * EPS * float(left.max())
    chunks = _label_chunks(table)
    for first, last in chunks:  # chunks bound memory; not a loop per label
        item, rater = table.label_item[first:last], table.label_rater[first:last]
        code = table.label_code[first:last]
        pc = rater * k
        pc += table.label_category[first:last]
        if table.presence is None:  # sparse: row by row
            shift = np.einsum("lf,lf->l", excess[item], per_rater[0][rater])
            shift += np.einsum("lf,lf->l", scaled[item], per_rater[1][rater])
            shift += inverse[item] * constant[rater]
        else:  # dense: the (item, rater) products of the chunk's items, then looked up
            start, stop = int(item[0]), int(item[-1]) + 1
            block = excess[start:stop] @ per_rater[0].T
            block += scaled[start:stop] @ per_rater[1].T
            block += inverse[start:stop, None] * constant[None, :]
            shift = block.ravel()
            if shift.shape[0] != last - first:  # unless every item has every rater
                shift = shift[(item - start) * n_raters + rater]
        # shift = -r dot_l + r T_p . (share_p - e_c), the other terms folded in by_pc
        own_rate = rate[rater]
        shift -= by_uc[2][code] * own_rate
        shift += by_pc[2][pc] * by_uc[3][code]
        weight = inverse[item]
        shift += by_pc[3][pc] * weight
        denominator = by_pc[1][pc]
        denominator -= by_uc[1][code]
        denominator += shift
        chunk = values[first:last]
        np.subtract(by_pc[0][pc], by_uc[0][code], out=chunk)
        chunk += shift
        # S is undefined when the room Amax' - Ae' = r (Amax_p - amax_l - r dot_l) vanishes
        if (denominator <= suspect).any():
            own_rate *= denominator
            lacking = own_rate <= EPS
            if skipped:
                lacking &= weight > 0
            room_lacking += np.bincount(rater, weights=lacking, minlength=n_raters)
        with np.errstate(divide="ignore", invalid="ignore"):
            chunk /= denominator
        if skipped:
            chunk[weight == 0] = 0.0
        sums += np.bincount(rater, weights=chunk, minlength=n_raters)
    mean = sums / np.maximum(n, 1.0)
    spread = np.zeros(n_raters)
    for first, last in chunks:  # the same chunks, centred on the means
        rater = table.label_rater[first:last]
        centred = values[first:last]
        with np.errstate(invalid="ignore"):  # inf - inf for raters without an interval
            centred -= mean[rater]
        if skipped:
            centred[inverse[table.label_item[first:last]] == 0] = 0.0
        np.square(centred, out=centred)
        spread += np.bincount(rater, weights=centred, minlength=n_raters)
    del values
    usable &= room_lacking == 0
    usable &= np.isfinite(spread)
    for p in np.flatnonzero(usable):  # bounded by the number of raters
        interval = jackknife_from_spread(float(estimate[p]), float(spread[p]), int(n[p]), level)
        if interval[0] is not None:
            low[p], high[p] = interval[0], interval[1]
    return result
