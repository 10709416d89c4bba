"""kappa_S of a fixed group (Shah 2011, Eq. 5, missing-data form) with its resampling.

kappa_S = (Ao - Ae) / (1 - Ae), Ae = (1/N) sum_u Ae_u, and the rater biases v_p in Ae_u are
themselves estimated from the items, so deleting an item changes every Ae_v that shares a rater
with it. Writing

    N Ae = T = sum_{p != q} W_pq v_p . v_q,   W_pq = sum_{u with p, q in R_u} 1 / (m_u (m_u - 1)),

deleting item u changes v_p only for p in R_u (v'_p = (a_p - e_{c_p}) / (n_p - 1)) and W_pq
only for p, q in R_u, which gives the exact closed form (delta_p = v'_p - v_p, H = W v)

    T'_u - T = 2 sum_{p in R_u} delta_p . H_p + sum_{p != q in R_u} W_pq delta_p . delta_q
               - w_u sum_{p != q in R_u} v'_p . v'_q,

O(sum_u m_u^2) over all items instead of N refits. The bootstrap uses the same sufficient
statistics: a_pc(w) = W @ (per-item one-hot rater labels), and W_pq(w) summed over the items'
rater-set patterns, so each resample costs O(N R K) flops, not a pass over the labels.
"""

from __future__ import annotations

import numpy as np

from auditor.stats.kappa import chance_per_item, kappa_from, observed_per_item
from auditor.stats.tables import GroupTable, within_item_pairs
from auditor.stats.totals import safe_ratio

# Bootstrap of kappa_S keeps an (n_patterns, R, R) and an (item chunk, R * K) array in memory.
MAX_PATTERN_CELLS = 1 << 24
ITEM_CHUNK_CELLS = 1 << 22


def estimate(table: GroupTable) -> tuple[float, float, float]:
    """(kappa_S, Ao, Ae); kappa_S is NaN when undefined."""
    ao = observed_per_item(table.counts, table.m).mean()
    ae = chance_per_item(table, table.rater_bias()).mean()
    return float(kappa_from(np.asarray(ao), np.asarray(ae))), float(ao), float(ae)


# The quadratic term of the jackknife runs on dense (item chunk, category, rater) blocks when
# items carry a fair share of the raters (labels * DENSE_OCCUPANCY >= items * raters); with
# many raters per few labels it walks the within-item pairs instead (memory O(pairs chunk)).
# Blocks of 2**16 cells (512 kB) stay in cache: twice as fast as blocks of 2**21.
DENSE_OCCUPANCY = 4
DENSE_CHUNK_CELLS = 1 << 16


def _dense(table: GroupTable) -> bool:
    n_raters: int = table.rater_counts.shape[0]
    n_labels: int = table.label_item.shape[0]
    return table.n_pairable * n_raters <= DENSE_OCCUPANCY * n_labels


def _item_chunks(table: GroupTable, cells_per_item: int) -> list[tuple[int, int, int, int]]:
    """(low, high, first, last): items [low, high) and their labels [first, last)."""
    n = table.n_pairable
    step = max(1, DENSE_CHUNK_CELLS // max(1, cells_per_item))
    out = []
    for low in range(0, n, step):  # chunks bound memory; not a loop per item
        high = min(n, low + step)
        last = int(table.starts[high]) if high < n else table.label_item.shape[0]
        out.append((low, high, int(table.starts[low]), last))
    return out


def _pair_weights(table: GroupTable) -> np.ndarray:
    """W (R, R), symmetric, zero diagonal: sum over shared items of 1 / (m_u (m_u - 1))."""
    n_raters = table.rater_counts.shape[0]
    weight = 1.0 / (table.m * (table.m - 1))
    if table.presence is not None:
        dense: np.ndarray = (table.presence * weight[:, None]).T @ table.presence
        np.fill_diagonal(dense, 0.0)
        return dense
    if _dense(table):
        # W = P' diag(weight) P over 0/1 presence blocks P (items, R), diagonal dropped
        w = np.zeros((n_raters, n_raters))
        for low, high, first, last in _item_chunks(table, n_raters):
            present = np.zeros((high - low) * n_raters)
            present[
                (table.label_item[first:last] - low) * n_raters + table.label_rater[first:last]
            ] = 1.0
            present = present.reshape(high - low, n_raters)
            w += (present * weight[low:high, None]).T @ present
        np.fill_diagonal(w, 0.0)
        return w
    flat = np.zeros(n_raters * n_raters)
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        code = table.label_rater[i] * n_raters + table.label_rater[j]
        flat += np.bincount(code, weights=weight[table.label_item[i]], minlength=flat.shape[0])
    square = flat.reshape(n_raters, n_raters)
    return square + square.T


def _pair_term(
    table: GroupTable,
    delta: np.ndarray,
    pair_w: np.ndarray,
    code: np.ndarray,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Per item, sum over ordered pairs p != q of its raters of W_pq delta_p . delta_q, (N,),
    walking the within-item label pairs (the sparse path; ``_dense_change`` is the dense one).

    delta : (R * K, K), the change of v_p for a label of rater p with category c (row p K + c);
    code : (L,) that row for each label; weights : agreement weights (K, K) (None: identity).
    """
    item, rater = table.label_item, table.label_rater
    left = delta if weights is None else delta @ weights
    out = np.zeros(table.n_pairable)
    for i, j in within_item_pairs(item, table.starts, table.m):
        dots = np.einsum("ij,ij->i", left[code[i]], delta[code[j]]) * pair_w[rater[i], rater[j]]
        out += 2.0 * np.bincount(item[i], weights=dots, minlength=out.shape[0])
    return out


def _dense_change(
    table: GroupTable,
    pair_w: np.ndarray,
    bias: np.ndarray,
    scale: tuple[np.ndarray, np.ndarray],
    per_label: np.ndarray,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """T'_u - T of every item from dense one-hot blocks Z (items, K, R) of the labels.

    delta_p = s_p v_p - t_p e_c for a label of p with category c (``scale`` = (s, t):
    1 / (n_p - 1) both, or s = -1, t = 0 when the item is p's only one), so the pair term
    sum_{p != q} W_pq delta_p . delta_q splits into a part in the item's rater set
    (x' (W o s s' o V V') x), one in each label's category (-2 t_p sum_q x_q W_pq s_q v_qc)
    and one in pairs of equal labels (sum_c z_c' (W o t t') z_c): two products with (R, K R)
    and (R, R) matrices per block, O(N R^2 K) flops, no (labels, K) array.
    per_label : (K R, F) the per-label terms summed per item (row c R + p): [linear, v'_p (K),
    |v'_p|^2], so sum over pairs of v'_p . v'_q is |sum v'_p|^2 - sum |v'_p|^2.
    With agreement weights w (K, K) every dot product a . b is a' w b: v_q becomes w v_q in the
    category term and a pair of labels (c, d) counts w_cd instead of [c = d]; the last column of
    ``per_label`` is then v'_p' w v'_p.
    """
    n_raters, k = bias.shape
    s, t = scale
    mixed = bias if weights is None else bias @ weights
    weighted = pair_w * s[:, None]  # W_qp s_q, rows q
    by_present = (weighted * s[None, :] * (mixed @ bias.T))[:, None, :] - 2.0 * (
        weighted * t[None, :]
    )[:, None, :] * mixed[:, :, None]
    by_present = by_present.reshape(n_raters, k * n_raters)
    by_equal = pair_w * t[:, None] * t[None, :]
    weight = 1.0 / (table.m * (table.m - 1))
    out = np.empty(table.n_pairable)
    cells = k * n_raters
    for low, high, first, last in _item_chunks(table, cells):
        size = high - low
        position = table.label_item[first:last] - low  # each label's cell in the block
        position *= cells
        position += table.label_category[first:last] * n_raters
        position += table.label_rater[first:last]
        block = np.zeros(size * cells)
        block[position] = 1.0
        onehot = block.reshape(size, cells)
        present = (
            table.presence[low:high]
            if table.presence is not None
            else onehot.reshape(size, k, n_raters).sum(axis=1)
        )
        spread = present @ by_present
        equal = block.reshape(size * k, n_raters) @ by_equal
        if weights is not None:  # a pair of labels (c, d) counts w_cd
            equal = np.einsum("cd,udp->ucp", weights, equal.reshape(size, k, n_raters))
        spread += equal.reshape(size, cells)
        pair = np.einsum("ij,ij->i", spread, onehot)
        del spread, equal
        sums = onehot @ per_label
        reduced = sums[:, 1 : 1 + k]
        square = np.einsum("ij,ij->i", reduced if weights is None else reduced @ weights, reduced)
        square -= sums[:, 1 + k]
        square *= weight[low:high]
        pair += sums[:, 0]
        pair -= square
        out[low:high] = pair
    return out


def leave_one_out(
    table: GroupTable,
    observed: np.ndarray | None = None,
    chance: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """kappa_S without each pairable item, shape (N,), NaN where undefined (exact).

    observed, chance : Ao_u and Ae_u (N,) when the caller has them already (required with
    ``weights``: then Ao^w_u and Ae^w_u).
    weights : agreement weights (K, K) for kappa_S^w (None: the identity, kappa_S).
    v'_p depends only on the rater and the category of its label on the deleted item, so the
    per-label terms are looked up in (R K)-row tables instead of (labels, K) arrays.
    """
    n = table.n_pairable
    n_raters, k = table.rater_counts.shape
    ao = observed_per_item(table.counts, table.m) if observed is None else observed
    bias = table.rater_bias()
    ae = chance_per_item(table, bias) if chance is None else chance
    weight = 1.0 / (table.m * (table.m - 1))
    pair_w = _pair_weights(table)
    helper = pair_w @ bias  # H_p = sum_q W_pq v_q, (R, K)
    if weights is not None:
        if observed is None or chance is None:
            raise ValueError("weighted kappa_S needs its observed and chance terms")
        helper = helper @ weights
    n_p = table.n_per_rater
    left = (n_p - 1).astype(float)
    # reduced[p, c] = v'_p after deleting an item where p gave c (0 if it was p's only item)
    reduced = table.rater_counts[:, None, :] - np.eye(k)[None, :, :]
    reduced = np.divide(
        reduced, left[:, None, None], out=np.zeros(reduced.shape), where=left[:, None, None] > 0
    )
    delta = reduced - bias[:, None, :]
    linear = 2.0 * (delta * helper[:, None, :]).sum(axis=2)
    own = reduced if weights is None else reduced @ weights
    quadratic = (own * reduced).sum(axis=2)  # v'_p' w v'_p
    if _dense(table):
        per_label = np.concatenate(
            [linear[:, :, None], reduced, quadratic[:, :, None]], axis=2
        )  # (R, K, F): rows reordered to c R + p below
        inverse = np.divide(1.0, left, out=np.zeros(n_raters), where=left > 0)
        scale = (np.where(n_p == 1, -1.0, inverse), inverse)
        per_label = per_label.transpose(1, 0, 2).reshape(k * n_raters, k + 2)
        change = _dense_change(table, pair_w, bias, scale, per_label, weights)
    else:
        reduced = reduced.reshape(n_raters * k, k)
        item = table.label_item
        code = table.label_rater * k + table.label_category
        change = np.bincount(item, weights=linear.ravel()[code], minlength=n)
        change += _pair_term(table, delta.reshape(n_raters * k, k), pair_w, code, weights)
        summed = np.empty((n, k))
        for c in range(k):  # bounded by the number of categories
            summed[:, c] = np.bincount(item, weights=reduced[code, c], minlength=n)
        squares = np.bincount(item, weights=quadratic.ravel()[code], minlength=n)
        del code
        mixed = summed if weights is None else summed @ weights
        change -= weight * (np.einsum("ij,ij->i", mixed, summed) - squares)
    remaining = n - 1
    ao_loo = safe_ratio(ao.sum() - ao, np.full(n, remaining))
    ae_loo = safe_ratio(ae.sum() + change, np.full(n, remaining))
    return kappa_from(ao_loo, ae_loo)


def _patterns(table: GroupTable) -> tuple[np.ndarray, np.ndarray]:
    """Rater-set pattern of each item: (pattern index (N,), presence (n_patterns, R) bool)."""
    n_raters = table.rater_counts.shape[0]
    n_bytes = (n_raters + 7) // 8
    bits = np.left_shift(1, table.label_rater % 8).astype(float)
    packed = np.bincount(
        table.label_item * n_bytes + table.label_rater // 8,
        weights=bits,
        minlength=table.n_pairable * n_bytes,
    ).astype(np.uint8)
    unique, index = np.unique(packed.reshape(-1, n_bytes), axis=0, return_inverse=True)
    presence = np.unpackbits(unique, axis=1, bitorder="little")[:, :n_raters].astype(bool)
    return index.reshape(-1), presence


class Bootstrap:
    """Resampled kappa_S from weight matrices (B, N) over pairable items; with agreement
    ``weights`` (K, K) and ``observed`` = Ao^w_u, kappa_S^w."""

    def __init__(
        self,
        table: GroupTable,
        observed: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> None:
        self.table = table
        n_raters, k = table.rater_counts.shape
        self.ao = observed_per_item(table.counts, table.m) if observed is None else observed
        self.weights = weights
        pattern, presence = _patterns(table)
        self.feasible = presence.shape[0] * n_raters * n_raters <= MAX_PATTERN_CELLS
        if not self.feasible:
            return
        self.pattern = pattern
        m = presence.sum(axis=1)
        outer = presence[:, :, None] & presence[:, None, :]
        outer[:, np.arange(n_raters), np.arange(n_raters)] = False
        self.pair_by_pattern = outer.reshape(presence.shape[0], -1) / (m * (m - 1))[:, None]
        self.chunk = max(1, ITEM_CHUNK_CELLS // max(1, n_raters * k))

    def replicates(self, weights: np.ndarray) -> np.ndarray:
        """kappa_S for each row of ``weights`` (B, N) -> (B,), NaN where undefined."""
        table = self.table
        n_raters, k = table.rater_counts.shape
        b = weights.shape[0]
        total = weights.sum(axis=1)
        ao = safe_ratio(weights @ self.ao, total)
        counts = np.zeros((b, n_raters * k))
        for low in range(
            0, table.n_pairable, self.chunk
        ):  # chunks bound memory, not a loop per item
            high = min(low + self.chunk, table.n_pairable)
            first, last = (
                table.starts[low],
                (table.starts[high] if high < table.n_pairable else table.label_item.shape[0]),
            )
            code = (
                (table.label_item[first:last] - low) * n_raters + table.label_rater[first:last]
            ) * k + table.label_category[first:last]
            onehot = np.bincount(code, minlength=(high - low) * n_raters * k)
            counts += weights[:, low:high] @ onehot.reshape(high - low, n_raters * k)
        counts = counts.reshape(b, n_raters, k)
        n_p = counts.sum(axis=2, keepdims=True)
        bias = np.divide(counts, n_p, out=np.zeros_like(counts), where=n_p > 0)
        pattern_weight = np.zeros((b, self.pair_by_pattern.shape[0]))
        for row in range(b):  # bounded by the resamples of one chunk
            pattern_weight[row] = np.bincount(
                self.pattern, weights=weights[row], minlength=pattern_weight.shape[1]
            )
        pair_w = (pattern_weight @ self.pair_by_pattern).reshape(b, n_raters, n_raters)
        mixed = bias if self.weights is None else bias @ self.weights
        chance_total = np.einsum("bpq,bpk,bqk->b", pair_w, mixed, bias)
        return kappa_from(ao, safe_ratio(chance_total, total))
