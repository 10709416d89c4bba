"""Other chance models (Brennan-Prediger, Gwet's AC1/AC2) and the weighted forms of observed
agreement and Fleiss' kappa (docs/measures.md, "Other chance models" and "Ordinal scales").

References: Brennan and Prediger (1981), "Coefficient kappa: some uses, misuses, and
alternatives"; Byrt, Bishop and Carlin (1993), "Bias, prevalence and kappa" (PABAK); Gwet (2008),
"Computing inter-rater reliability and its variance in the presence of high agreement", and
Gwet (2014), "Handbook of Inter-Rater Reliability", ch. 2-3 (AC1, AC2, weighted coefficients).

With agreement weights w (K, K), 1 on the diagonal (the identity for a nominal scale):

    Ao_u^w = (c_u' w c_u - m_u) / (m_u (m_u - 1))          (pairable items)
    bp:     Ae = sum(w) / K^2
    AC1/2:  pi_c = mean over items with a group label of c_uc / m_u
            Ae = sum(w) sum_c pi_c (1 - pi_c) / (K (K - 1))
    Fleiss: Ae = P' w P, P_c = sum_u c_uc / sum_u m_u
    each    (Ao^w - Ae) / (1 - Ae)

Every one is a function of item totals (``ItemTotals``): Ao^w_u, c_u / m_u or c_u, m_u per
pairable item; AC's pi_c also counts items with a single group label (Gwet's definition), whose
category counts enter as a constant (``GroupTable.single_counts``): the intervals resample the
pairable items and hold those fixed.
"""

from __future__ import annotations

import numpy as np

from auditor.domain import Scale, Weights
from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, TotalsFunction, safe_ratio, sharing


def weight_matrix(
    k: int, scale: Scale = Scale.NOMINAL, weights: Weights = Weights.QUADRATIC
) -> np.ndarray:
    """Agreement weights (K, K): the identity on a nominal scale; on an ordinal one
    1 - |c - k| / (K - 1) (linear) or 1 - (c - k)^2 / (K - 1)^2 (quadratic)."""
    if scale == Scale.NOMINAL:
        return np.eye(k)
    index = np.arange(k, dtype=float)
    distance = np.abs(index[:, None] - index[None, :]) / max(k - 1, 1)
    result: np.ndarray = 1.0 - (distance if weights == Weights.LINEAR else distance**2)
    return result


def observed_weighted_per_item(counts: np.ndarray, m: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Ao^w_u = sum_c c_uc (sum_k w_ck c_uk - 1) / (m_u (m_u - 1)); counts (N, K) -> (N,)."""
    spread = counts @ w
    agreeing = np.einsum("ij,ij->i", spread, counts) - m
    result: np.ndarray = agreeing / (m * (m - 1))
    return result


def _corrected(ao: np.ndarray, ae: np.ndarray | float) -> np.ndarray:
    return safe_ratio(ao - ae, 1.0 - np.asarray(ae))


def _bp_function(w: np.ndarray) -> TotalsFunction:
    k = w.shape[0]
    chance = float(w.sum()) / (k * k)

    def function(totals: np.ndarray) -> np.ndarray:
        return _corrected(safe_ratio(totals[..., 1], totals[..., 0]), chance)

    return function


def _gwet_function(table: GroupTable, w: np.ndarray) -> TotalsFunction:
    k = w.shape[0]
    single = table.single_counts.astype(float)
    n_single = float(single.sum())
    factor = float(w.sum()) / (k * (k - 1))

    def function(totals: np.ndarray) -> np.ndarray:
        items = totals[..., 0]
        pi = (totals[..., 2:] + single) / np.maximum(items + n_single, 1e-300)[..., None]
        chance = factor * np.einsum("...k,...k->...", pi, 1.0 - pi)
        return _corrected(safe_ratio(totals[..., 1], items), chance)

    return function


def gwet_features(table: GroupTable, observed: np.ndarray) -> np.ndarray:
    """[1, Ao_u, c_u / m_u (K)] per pairable item, shape (N, 2 + K): what AC and bp read."""
    k = table.counts.shape[1]
    features = np.empty((table.n_pairable, 2 + k))
    features[:, 0] = 1.0
    features[:, 1] = observed
    np.divide(table.counts, table.m[:, None], out=features[:, 2:])
    return features


def gwet_and_bp(
    table: GroupTable, observed: np.ndarray, w: np.ndarray, keep: bool = True
) -> tuple[ItemTotals, ItemTotals]:
    """Gwet's AC1 (identity weights) or AC2, and bp (bp^w), over the same per-item statistics
    [1, Ao_u, c_u / m_u (K)] (``observed`` is Ao_u or Ao^w_u, shape (N,)); without ``keep``
    (no intervals) from their column sums only."""
    functions = (_gwet_function(table, w), _bp_function(w))
    if keep:
        ac, bp = sharing(gwet_features(table, observed), *functions)
    else:
        inverse = 1.0 / table.m
        total = np.concatenate([[table.n_pairable, observed.sum()], table.counts.T @ inverse])
        ac, bp = sharing(table.n_pairable, *functions, total=total)
    return ac, bp


def brennan_prediger(observed: np.ndarray, w: np.ndarray) -> ItemTotals:
    """bp (bp^w with weights): chance Ae = sum(w) / K^2, 1/K unweighted; per-item statistics
    [1, Ao_u]."""
    features = np.column_stack([np.ones(observed.shape[0]), observed])
    return ItemTotals(features, _bp_function(w))


def gwet(table: GroupTable, observed: np.ndarray, w: np.ndarray) -> ItemTotals:
    """Gwet's AC1 (identity weights) or AC2; per-item statistics [1, Ao_u, c_u / m_u (K)]."""
    return ItemTotals(gwet_features(table, observed), _gwet_function(table, w))


def fleiss_weighted(
    table: GroupTable, observed: np.ndarray, w: np.ndarray, keep: bool = True
) -> ItemTotals:
    """Fleiss' kappa with weights: Ae = P' w P; per-item statistics [1, Ao^w_u, m_u, c_u (K)]
    (without ``keep``, their column sums only)."""
    k = w.shape[0]

    def function(totals: np.ndarray) -> np.ndarray:
        m = np.maximum(totals[..., 2], 1e-300)
        shares = totals[..., 3:] / m[..., None]
        chance = np.einsum("...k,kl,...l->...", shares, w, shares)
        return _corrected(safe_ratio(totals[..., 1], totals[..., 0]), chance)

    if not keep:
        counts = table.rater_counts.sum(axis=0).astype(float)
        total = np.concatenate([[table.n_pairable, observed.sum(), counts.sum()], counts])
        return sharing(table.n_pairable, function, total=total)[0]
    features = np.empty((observed.shape[0], 3 + k))
    features[:, 0] = 1.0
    features[:, 1] = observed
    features[:, 2] = table.m
    features[:, 3:] = table.counts
    return ItemTotals(features, function)
