"""Observed agreement, Fleiss' kappa and kappa_S (docs/measures.md, "Project measures").

References: Fleiss (1971) "Measuring nominal scale agreement among many raters"; Shah (2011)
"Generalized Agreement Statistics over Fixed Group of Experts", Eq. 1-5, with the missing-data
generalisation of docs/measures.md, "Project measures" (chance agreement averaged over the
pairs present on each item).
"""

from __future__ import annotations

import numpy as np

from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, mean_of, safe_ratio


def observed_per_item(counts: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Ao_u = sum_c c_uc (c_uc - 1) / (m_u (m_u - 1)); counts (N, K), m (N,) -> (N,)."""
    agreeing = (counts * (counts - 1)).sum(axis=1)
    result: np.ndarray = agreeing / (m * (m - 1))
    return result


def observed_agreement(table: GroupTable) -> ItemTotals:
    """Ao, the mean over pairable items of Ao_u (each item weighs the same)."""
    return mean_of(observed_per_item(table.counts, table.m))


def _fleiss(totals: np.ndarray) -> np.ndarray:
    n, ao_sum, m_sum, counts = totals[..., 0], totals[..., 1], totals[..., 2], totals[..., 3:]
    # sum_c P_c^2 = sum_c counts_c^2 / m^2: no (..., K) temporary (the jackknife has N rows)
    m = np.maximum(m_sum, 1e-300)
    ae = np.einsum("...k,...k->...", counts, counts) / m / m
    return safe_ratio(safe_ratio(ao_sum, n) - ae, 1.0 - ae)


def fleiss_kappa(table: GroupTable, observed: np.ndarray | None = None) -> ItemTotals:
    """Fleiss' kappa with P_c pooled over all labels of pairable items.

    Per-item statistics: [1, Ao_u, m_u, c_u1..c_uK], shape (N, 3 + K); ``observed`` is Ao_u
    (N,) when the caller has it already.
    """
    ao = observed_per_item(table.counts, table.m) if observed is None else observed
    k = table.counts.shape[1]
    features = np.empty((ao.shape[0], 3 + k))
    features[:, 0] = 1.0
    features[:, 1] = ao
    features[:, 2] = table.m
    features[:, 3:] = table.counts
    return ItemTotals(features, _fleiss)


def rater_sums(table: GroupTable, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item and category, the sums over the raters present of v_pc and of v_pc^2.

    bias : v, shape (R, K). Returns (s, s2), each shape (N, K).
    """
    k = bias.shape[1]
    both = table.sum_over_raters(np.hstack([bias, bias**2]))
    return both[:, :k], both[:, k:]


def chance_by_category(table: GroupTable, bias: np.ndarray) -> np.ndarray:
    """Shah's Ae_u(c) = [ (sum_{p in R_u} v_pc)^2 - sum_{p in R_u} v_pc^2 ] / (m_u (m_u - 1)).

    The mean over ordered pairs of distinct raters on u of v_pc v_qc; shape (N, K).
    """
    summed, squares = rater_sums(table, bias)
    result: np.ndarray = (summed**2 - squares) / (table.m * (table.m - 1))[:, None]
    return result


def chance_per_item(table: GroupTable, bias: np.ndarray) -> np.ndarray:
    """Ae_u = sum_c Ae_u(c), shape (N,)."""
    result: np.ndarray = chance_by_category(table, bias).sum(axis=1)
    return result


def kappa_from(ao: np.ndarray, ae: np.ndarray) -> np.ndarray:
    """(Ao - Ae) / (1 - Ae), NaN when Ae = 1."""
    return safe_ratio(ao - ae, 1.0 - ae)
