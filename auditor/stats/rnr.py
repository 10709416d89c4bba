"""Expected agreement of independent classifiers and its repeatability / rater-effect split.

Reference: Bashkansky and Marmor (ENBIS 2025 slides, seeds); docs/measures.md, "Version 2".
Written with two agreement rates, for an item with L raters and K categories,

    a = mean_l sum_c P_l(c)^2              (within: two looks of one rater agree)
    b = mean over ordered pairs l != l' of P_l . P_l'   (between: two raters agree)
    Repeatability = K/(K-1) (1 - a)
    RaterEffect   = K/(K-1) (1 - 1/L) (a - b)
    kappa_BM      = 1 - K/(K-1) (1 - b)

From labels: a_u = mean over u's raters of SA_p (raters without repeats take the mean SA of the
raters with repeats), b_u = Ao_u on the first looks. Project values are means over items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.stats.kappa import observed_per_item
from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, mean_of


@dataclass(frozen=True)
class Split:
    """kappa_BM always (when pairable); repeatability and rater effect None without repeats."""

    expected_agreement: ItemTotals
    repeatability: ItemTotals | None
    rater_effect: ItemTotals | None


def split_from_rates(
    within: np.ndarray, between: np.ndarray, raters: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """kappa_BM, Repeatability, RaterEffect from a (within), b (between) and L, each (N,)."""
    scale = k / (k - 1)
    repeatability = scale * (1.0 - within)
    effect = scale * (1.0 - 1.0 / raters) * (within - between)
    kappa = 1.0 - scale * (1.0 - between)
    return kappa, repeatability, effect


def split(
    table: GroupTable,
    rater_sa: np.ndarray,
    rated: np.ndarray,
    observed: np.ndarray | None = None,
) -> Split:
    """Per pairable item; rater_sa : SA_p (R,), rated : (R,) bool, raters with repeats;
    observed : Ao_u (N,) when the caller has it already."""
    k = table.counts.shape[1]
    between = observed_per_item(table.counts, table.m) if observed is None else observed
    raters = table.m.astype(float)
    if not rated.any():
        kappa = 1.0 - k / (k - 1) * (1.0 - between)
        return Split(mean_of(kappa), None, None)
    sa = np.where(rated, rater_sa, rater_sa[rated].mean())
    within = (
        np.bincount(table.label_item, weights=sa[table.label_rater], minlength=table.n_pairable)
        / raters
    )
    kappa, repeatability, effect = split_from_rates(within, between, raters, k)
    return Split(mean_of(kappa), mean_of(repeatability), mean_of(effect))


def slopes(table: GroupTable) -> dict[str, np.ndarray]:
    """d(item sum)/d SA_p (R,) of Repeatability and RaterEffect: both are linear in the SA.

    a_u = (1/m_u) sum over u's raters of SA_p, so Repeatability_u moves by -K/(K-1) / m_u and
    RaterEffect_u by K/(K-1) (1 - 1/m_u) / m_u per unit of SA_p, for each rater p of u.
    """
    k, n_raters = table.counts.shape[1], table.rater_counts.shape[0]
    inverse = 1.0 / table.m
    scale = k / (k - 1)
    per_rater = np.bincount(
        table.label_rater, weights=inverse[table.label_item], minlength=n_raters
    )
    effect = np.bincount(
        table.label_rater, weights=((1.0 - inverse) * inverse)[table.label_item], minlength=n_raters
    )
    return {"repeatability": -scale * per_rater, "rater_effect": scale * effect}
