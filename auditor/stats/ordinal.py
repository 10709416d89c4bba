"""Ordinal scales: Krippendorff's alpha with the ordinal and the interval metric, the weighted
chance term of kappa_S, and each rater's grade bias (docs/measures.md, "Ordinal scales").

References: Krippendorff (2011), "Computing Krippendorff's alpha-reliability" (metrics and the
coincidence matrix with missing data); Shah (2011), Eq. 4-5 with agreement weights; Cohen
(1968), "Weighted kappa".

Alpha with a metric delta^2 over the coincidence matrix o_ck = sum_u c_uc c_uk / (m_u - 1)
(c != k; units with m_u >= 2), n_c = sum_u c_uc, n = sum_c n_c:

    alpha = 1 - (n - 1) sum_{c<k} o_ck delta^2_ck / sum_{c<k} n_c n_k delta^2_ck

interval: delta^2_ck = (c - k)^2 on the category index; ordinal: delta^2_ck =
(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, which depends on the totals n_g themselves. Both are
functions of the item totals [m_u, c_u (K), c_uc c_uk / (m_u - 1) for c < k], so the jackknife
and the bootstrap come from ``ItemTotals`` like every other measure.
"""

from __future__ import annotations

import numpy as np

from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, TotalsFunction, safe_ratio, sharing

ORDINAL = "ordinal"
INTERVAL = "interval"


def pair_index(k: int) -> tuple[np.ndarray, np.ndarray]:
    """(c, k) of every pair of categories c < k, each shape (K (K - 1) / 2,)."""
    first, second = np.triu_indices(k, 1)
    return first.astype(np.int64), second.astype(np.int64)


def alpha_features(table: GroupTable) -> np.ndarray:
    """[m_u, c_u (K), c_uc c_uk / (m_u - 1) for c < k] per pairable item."""
    k = table.counts.shape[1]
    first, second = pair_index(k)
    counts = table.counts.astype(float)
    features = np.empty((table.n_pairable, 1 + k + first.shape[0]))
    features[:, 0] = table.m
    features[:, 1 : 1 + k] = counts
    inverse = 1.0 / (table.m - 1.0)
    for column, (c, d) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        # bounded by the K (K - 1) / 2 pairs of categories
        np.multiply(counts[:, c], counts[:, d], out=features[:, 1 + k + column])
        features[:, 1 + k + column] *= inverse
    return features


def _alpha_function(k: int, metric: str) -> TotalsFunction:
    first, second = pair_index(k)
    fixed = (first - second).astype(float) ** 2

    def function(totals: np.ndarray) -> np.ndarray:
        values = totals[..., 0]
        shares = totals[..., 1 : 1 + k]
        coincidences = totals[..., 1 + k :]
        if metric == INTERVAL:
            delta = np.broadcast_to(fixed, coincidences.shape)
        else:
            cumulative = np.cumsum(shares, axis=-1)
            before = cumulative - shares
            delta = (
                cumulative[..., second]
                - before[..., first]
                - 0.5 * (shares[..., first] + shares[..., second])
            ) ** 2
        observed = np.einsum("...p,...p->...", coincidences, delta)
        expected = np.einsum("...p,...p->...", shares[..., first] * shares[..., second], delta)
        return 1.0 - safe_ratio((values - 1.0) * observed, expected)

    return function


def alpha_metric(table: GroupTable, metric: str) -> ItemTotals:
    """Krippendorff's alpha, ``metric`` "ordinal" or "interval", over pairable items."""
    return ItemTotals(alpha_features(table), _alpha_function(table.counts.shape[1], metric))


def alphas(table: GroupTable, keep: bool = True) -> tuple[ItemTotals, ItemTotals]:
    """Ordinal and interval alpha over the same per-item statistics (one column sum; without
    ``keep``, the coincidences summed as one product counts' diag(1 / (m_u - 1)) counts)."""
    k = table.counts.shape[1]
    functions = (_alpha_function(k, ORDINAL), _alpha_function(k, INTERVAL))
    if keep:
        ordinal, interval = sharing(alpha_features(table), *functions)
        return ordinal, interval
    counts = table.counts.astype(float)
    gram = (counts / (table.m - 1.0)[:, None]).T @ counts
    first, second = pair_index(k)
    total = np.concatenate([[float(table.m.sum())], counts.sum(axis=0), gram[first, second]])
    ordinal, interval = sharing(table.n_pairable, *functions, total=total)
    return ordinal, interval


def chance_weighted_per_item(
    table: GroupTable, summed: np.ndarray, bias: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """kappa_S^w's Ae_u^w = [S_u' w S_u - sum_{p in R_u} v_p' w v_p] / (m_u (m_u - 1)), (N,).

    summed : S_u = sum_{p in R_u} v_p, (N, K) (``kappa.rater_sums``); bias : v (R, K).
    """
    own = np.einsum("pk,kl,pl->p", bias, w, bias)[:, None]
    between = np.einsum("ij,ij->i", summed @ w, summed)
    between -= table.sum_over_raters(own)[:, 0]
    result: np.ndarray = between / (table.m * (table.m - 1))
    return result


def grade_differences(table: GroupTable) -> np.ndarray:
    """Per group label on a pairable item, its category index minus the mean index of the other
    group raters on the item, shape (L,) in label order (``grade_bias`` is their mean per
    rater)."""
    k = table.counts.shape[1]
    index_sum = table.counts @ np.arange(k, dtype=float)
    own = table.label_category.astype(float)
    others = (index_sum[table.label_item] - own) / (table.m[table.label_item] - 1.0)
    result: np.ndarray = own - others
    return result
