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

from collections.abc import Callable

import numpy as np

from auditor.domain import Scale, Weights
from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, safe_ratio


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


def brennan_prediger(observed: np.ndarray, w: np.ndarray) -> ItemTotals:
    """bp (bp^w with weights): chance Ae = sum(w) / K^2, 1/K unweighted. ``observed`` is Ao_u
    (or Ao^w_u), shape (N,); per-item statistics [1, Ao_u]."""
    k = w.shape[0]
    chance = float(w.sum()) / (k * k)
    features = np.column_stack([np.ones(observed.shape[0]), observed])

    def function(totals: np.ndarray) -> np.ndarray:
        return _corrected(safe_ratio(totals[..., 1], totals[..., 0]), chance)

    return ItemTotals(features, function)


def gwet(table: GroupTable, observed: np.ndarray, w: np.ndarray) -> ItemTotals:
    """Gwet's AC1 (identity weights) or AC2; per-item statistics [1, Ao_u, c_u / m_u (K)]."""
    k = w.shape[0]
    n = table.n_pairable
    features = np.empty((n, 2 + k))
    features[:, 0] = 1.0
    features[:, 1] = observed
    np.divide(table.counts, table.m[:, None], out=features[:, 2:])
    single = table.single_counts.astype(float)
    n_single = float(single.sum())
    factor = float(w.sum()) / (k * (k - 1))

    def function(totals: np.ndarray) -> np.ndarray:
        items = totals[..., 0]
        pi = (totals[..., 2:] + single) / np.maximum(items + n_single, 1e-300)[..., None]
        chance = factor * np.einsum("...k,...k->...", pi, 1.0 - pi)
        return _corrected(safe_ratio(totals[..., 1], items), chance)

    return ItemTotals(features, function)


def fleiss_weighted(table: GroupTable, observed: np.ndarray, w: np.ndarray) -> ItemTotals:
    """Fleiss' kappa with weights: Ae = P' w P; per-item statistics [1, Ao^w_u, m_u, c_u (K)]."""
    k = w.shape[0]
    features = np.empty((observed.shape[0], 3 + k))
    features[:, 0] = 1.0
    features[:, 1] = observed
    features[:, 2] = table.m
    features[:, 3:] = table.counts

    def function(totals: np.ndarray) -> np.ndarray:
        m = np.maximum(totals[..., 2], 1e-300)
        shares = totals[..., 3:] / m[..., None]
        chance = np.einsum("...k,kl,...l->...", shares, w, shares)
        return _corrected(safe_ratio(totals[..., 1], totals[..., 0]), chance)

    return ItemTotals(features, function)


def kappa_of(ao: float, ae: float) -> float:
    """(Ao - Ae) / (1 - Ae) of two numbers, NaN when Ae = 1."""
    return float(_corrected(np.asarray(ao), np.asarray(ae)))


TotalsFunction = Callable[[np.ndarray], np.ndarray]
