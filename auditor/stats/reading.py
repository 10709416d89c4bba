"""Reading a coefficient: category shares, prevalence and bias indices, specific agreement per
category and each rater's confusion against the others (docs/measures.md, "Reading a
coefficient").

References: Byrt, Bishop and Carlin (1993), "Bias, prevalence and kappa" (PI, BI, PABAK);
Cicchetti and Feinstein (1990), "High agreement but low kappa: II. Resolving the paradoxes"
(positive and negative agreement); Uebersax (1982) and Fleiss (1971) for specific agreement
with many raters:

    P_c  = sum_u c_uc / sum_u m_u                                      (pairable items)
    PI   = sqrt(K / (K - 1) sum_c (P_c - 1/K)^2)     (0: equal shares; 1: one category)
    BI   = sum over rater pairs of (1/2) sum_c |n_a(c) - n_b(c)| / sum over pairs of n_ab
           (n_a(c): shared items a gave c; each pair weighted by its shared items)
    ps_c = sum_u c_uc (c_uc - 1) / sum_u c_uc (m_u - 1)
    T_p[c, k] = sum over items p gave c of (c_uk - [k = c]) / (m_u - 1)

P, PI and ps_c are functions of item totals [m_u, c_u, c_uc (c_uc - 1), c_uc (m_u - 1)], so they
get intervals like every other measure; BI is read from the pairwise confusion tables and has
an exact delete-one-item jackknife (``bias_index_leave_one_out``) whatever the project's method
(as per-rater S): a bootstrap would need every pair's marginals per item.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from auditor.stats.tables import GroupTable, onehot_blocks, within_item_pairs
from auditor.stats.totals import ItemTotals, TotalsFunction, safe_ratio, sharing

NOT_USED = "category not used on a pairable item"


def _share_of(column: int) -> Callable[[np.ndarray], np.ndarray]:
    def function(totals: np.ndarray) -> np.ndarray:
        return safe_ratio(totals[..., 1 + column], totals[..., 0])

    return function


def share_features(table: GroupTable) -> np.ndarray:
    """[m_u, c_u (K)] per pairable item, shape (N, 1 + K)."""
    return np.column_stack([table.m, table.counts]).astype(float)


def shares_and_prevalence(
    table: GroupTable, keep: bool = True
) -> tuple[list[ItemTotals], ItemTotals]:
    """P_c of each category and the prevalence index, over the same statistics
    [m_u, c_u (K)] (one column sum for all; without ``keep`` the raters' counts give it)."""
    k = table.counts.shape[1]
    functions = (*(_share_of(c) for c in range(k)), _prevalence_function(k))
    if keep:
        found = sharing(share_features(table), *functions)
    else:
        counts = table.rater_counts.sum(axis=0).astype(float)
        total = np.concatenate([[counts.sum()], counts])
        found = sharing(table.n_pairable, *functions, total=total)
    return found[:k], found[k]


def _prevalence_function(k: int) -> TotalsFunction:
    """PI = sqrt(K/(K-1) sum_c (P_c - 1/K)^2), from [m_u, c_u (K)]; |P_1 - P_0| for K = 2."""

    def function(totals: np.ndarray) -> np.ndarray:
        m = np.maximum(totals[..., 0], 1e-300)
        centred = totals[..., 1:] / m[..., None] - 1.0 / k
        result: np.ndarray = np.sqrt(k / (k - 1) * np.einsum("...k,...k->...", centred, centred))
        return result

    return function


def specific_agreement(table: GroupTable, keep: bool = True) -> list[ItemTotals]:
    """ps_c per category; per-item statistics [c_uc (c_uc - 1) (K), c_uc (m_u - 1) (K)]
    (without ``keep``, their column sums only)."""
    k = table.counts.shape[1]
    counts = table.counts.astype(float)

    def of(c: int) -> Callable[[np.ndarray], np.ndarray]:
        def function(totals: np.ndarray) -> np.ndarray:
            return safe_ratio(totals[..., c], totals[..., k + c])

        return function

    functions = [of(c) for c in range(k)]
    if not keep:
        agreeing = np.einsum("uk,uk->k", counts, counts) - counts.sum(axis=0)
        total = np.concatenate([agreeing, (table.m - 1.0) @ counts])
        return sharing(table.n_pairable, *functions, total=total)
    features = np.empty((table.n_pairable, 2 * k))
    np.multiply(counts, counts - 1.0, out=features[:, :k])
    np.multiply(counts, (table.m - 1.0)[:, None], out=features[:, k:])
    return sharing(features, *functions)


def bias_index(confusion: np.ndarray) -> float:
    """BI from the pairwise confusion tables (P, K, K) (rows: rater a, columns: rater b); NaN
    without a shared item. For two raters and two categories it is |b - c| / n (Byrt's BI)."""
    shared = float(confusion.sum())
    if shared == 0:
        return float("nan")
    difference = np.abs(confusion.sum(axis=2) - confusion.sum(axis=1)).sum()
    return float(0.5 * difference / shared)


def confusion_carry(table: GroupTable) -> np.ndarray:
    """Per pairable item [c_u / (m_u - 1) (K), 1 / (m_u - 1)], shape (N, K + 1): summed over a
    rater's labels of category c, the first K columns minus the last at c are T_p[c, :]."""
    inverse = 1.0 / (table.m - 1.0)
    return np.column_stack([table.counts * inverse[:, None], inverse])


def rater_confusion(table: GroupTable, carried: np.ndarray | None = None) -> np.ndarray:
    """T (R, K, K): T_p[c, k] summed over p's pairable items she labeled c of the share of the
    other group raters who gave k (not normalised; row sums are her counts of c).

    carried : the sums of ``confusion_carry`` per (rater, category), (R K, K + 1), when the
    pairwise Cohen pass has them (``PairwiseCohen.carried``); else one bincount per column.
    """
    n_raters, k = table.rater_counts.shape
    if carried is None:
        carry = confusion_carry(table)
        code = table.label_rater * k + table.label_category
        carried = np.empty((n_raters * k, k + 1))
        for column in range(k + 1):  # bounded by the number of categories
            carried[:, column] = np.bincount(
                code, weights=carry[table.label_item, column], minlength=n_raters * k
            )
    out = carried[:, :k].copy()
    # her own label is not one of the others'
    out[np.arange(n_raters * k), np.tile(np.arange(k), n_raters)] -= carried[:, k]
    return out.reshape(n_raters, k, k)


def grade_bias_from(confusion: np.ndarray, rater_counts: np.ndarray) -> np.ndarray:
    """Each rater's mean of (her grade - the others' mean grade) over her pairable items, (R,),
    from T (``rater_confusion``) and her counts a_pc: (sum_c c a_pc - sum_c sum_k k T_p[c, k])
    / n_p; NaN for a rater without a pairable item."""
    k = confusion.shape[1]
    grade = np.arange(k, dtype=float)
    own = rater_counts @ grade
    others = np.einsum("pck,k->p", confusion, grade)
    return safe_ratio(own - others, rater_counts.sum(axis=1).astype(float))


def row_normalised(confusion: np.ndarray) -> np.ndarray:
    """Each row divided by its sum ("when she says c, the others say k"); NaN rows where she
    never said c."""
    totals = confusion.sum(axis=-1, keepdims=True)
    return safe_ratio(confusion, totals)


def bias_index_leave_one_out(
    table: GroupTable, rater_a: np.ndarray, rater_b: np.ndarray, confusion: np.ndarray
) -> np.ndarray:
    """BI without each pairable item, shape (N,), NaN where no shared item is left (exact).

    Deleting item u removes, for every pair of its raters with labels (c, d), one count from
    the pair's confusion cell (c, d): n drops by C(m_u, 2) and, when c != d, the pair's
    difference of marginals D_c = n_a(c) - n_b(c) moves by -1 at c and +1 at d. The change of
    (1/2) sum_c |D_c| then depends only on (pair, c, d): a (P, K, K) table read for every
    within-item label pair (in chunks), summed per item.
    """
    n_raters, k = table.rater_counts.shape
    difference = confusion.sum(axis=2) - confusion.sum(axis=1)  # D (P, K)
    down = np.abs(difference - 1.0) - np.abs(difference)  # D_c - 1 at her category c
    up = np.abs(difference + 1.0) - np.abs(difference)  # D_d + 1 at the other's d
    change = 0.5 * (down[:, :, None] + up[:, None, :])
    change[:, np.arange(k), np.arange(k)] = 0.0
    numerator = np.zeros(table.n_pairable)
    if n_raters * k <= DENSE_COLUMNS:
        _dense_pair_sums(table, rater_a, rater_b, change, numerator)
    else:
        _walked_pair_sums(table, rater_a, rater_b, change, numerator)
    total = 0.5 * np.abs(difference).sum()
    shared = float(confusion.sum())
    left = shared - table.m * (table.m - 1) / 2.0
    return safe_ratio(total + numerator, left)


# With at most this many (rater, category) columns the per-item sum over label pairs is a
# quadratic form of the items' one-hot labels, on blocks of DENSE_BLOCK_CELLS cells.
DENSE_COLUMNS = 64
DENSE_BLOCK_CELLS = 1 << 16


def _dense_pair_sums(
    table: GroupTable,
    rater_a: np.ndarray,
    rater_b: np.ndarray,
    change: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[u] = sum over pairs a < b of u's raters of change[pair(a, b), c_a, c_b], as z' U z
    with z the item's one-hot (rater, category) row and U (R K, R K) holding each pair's
    (K, K) table in its (a, b) block: BLAS products per block of items, no pair arrays."""
    n_raters, k = table.rater_counts.shape
    columns = n_raters * k
    blocks = np.zeros((n_raters, k, n_raters, k))
    for p in range(rater_a.shape[0]):  # bounded by the rater pairs (R K <= 64)
        blocks[rater_a[p], :, rater_b[p], :] = change[p]
    upper = blocks.reshape(columns, columns)
    for low, high, onehot in onehot_blocks(table, DENSE_BLOCK_CELLS):
        out[low:high] = np.einsum("ij,ij->i", onehot @ upper, onehot)


def _walked_pair_sums(
    table: GroupTable,
    rater_a: np.ndarray,
    rater_b: np.ndarray,
    change: np.ndarray,
    out: np.ndarray,
) -> None:
    """The same sums walking the within-item label pairs in chunks (many raters)."""
    n_raters, k = table.rater_counts.shape
    pair_of = np.full(n_raters * n_raters, -1, dtype=np.int64)
    pair_of[rater_a * n_raters + rater_b] = np.arange(rater_a.shape[0])
    flat = change.ravel()
    numerator = out
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        # labels are sorted by rater within an item: rater[i] < rater[j], the pair (a, b)
        pair = pair_of[table.label_rater[i] * n_raters + table.label_rater[j]]
        cell = (pair * k + table.label_category[i]) * k + table.label_category[j]
        numerator += np.bincount(
            table.label_item[i], weights=flat[cell], minlength=numerator.shape[0]
        )
