"""Estimators of the project measures of docs/measures.md, "Other chance models", "Ordinal
scales" and "Reading a coefficient": AC1, bp, the prevalence and bias indices, per-category
shares and specific agreement, and on an ordinal scale the weighted coefficients. Each is a
function of item totals (or, for kappa_S^w, has its own exact resampling), so the project's
interval method applies to it like to kappa_S.
"""

from __future__ import annotations

import numpy as np

from auditor.stats import chance, kappa_s, ordinal, reading
from auditor.stats.cohen import PairwiseCohen
from auditor.stats.estimators import Estimator, from_totals
from auditor.stats.kappa import kappa_from
from auditor.stats.tables import GroupTable

NO_PAIRABLE = "no pairable item (no item labeled by two human raters)"
SINGLE_CATEGORY = "a single category in use: chance agreement is 1"
NO_SHARED = "no two raters shared an item"


def _none() -> np.ndarray:
    raise ValueError("intervals were not requested")


def category_key(name: str, category: int) -> str:
    """The estimator's key of a per-category measure ("category_share:2")."""
    return f"{name}:{category}"


def nominal_estimators(
    table: GroupTable, observed: np.ndarray, pairs: PairwiseCohen, keep: bool
) -> dict[str, Estimator]:
    """ac1, bp, prevalence_index, bias_index and the per-category shares and specific
    agreement (keys from ``category_key``). ``observed`` is Ao_u (N,); ``pairs`` the
    pairwise Cohen tables. bias_index's interval is always its jackknife."""
    k = table.counts.shape[1]
    identity = np.eye(k)
    ac1, bp = chance.gwet_and_bp(table, observed, identity, keep)
    out = {
        "ac1": from_totals(ac1, SINGLE_CATEGORY, keep),
        "bp": from_totals(bp, NO_PAIRABLE, keep),
    }
    shares, prevalence = reading.shares_and_prevalence(table, keep)
    out["prevalence_index"] = from_totals(prevalence, NO_PAIRABLE, keep)
    for c, totals in enumerate(shares):
        out[category_key("category_share", c)] = from_totals(totals, NO_PAIRABLE, keep)
    for c, totals in enumerate(reading.specific_agreement(table, keep)):
        out[category_key("specific_agreement", c)] = from_totals(totals, reading.NOT_USED, keep)
    shared = int(pairs.confusion.sum())

    def bias_leave_one_out() -> np.ndarray:
        return reading.bias_index_leave_one_out(
            table, pairs.rater_a, pairs.rater_b, pairs.confusion
        )

    out["bias_index"] = Estimator(
        reading.bias_index(pairs.confusion),
        shared,
        NO_SHARED,
        bias_leave_one_out if keep else _none,
        None,
        jackknife_only=True,
    )
    return out


def ordinal_estimators(
    table: GroupTable,
    summed: np.ndarray,
    bias: np.ndarray,
    w: np.ndarray,
    keep: bool,
    bootstrap: bool,
) -> dict[str, Estimator]:
    """kappa_s_w, fleiss_kappa_w, ac2, bp_w, alpha_ordinal, alpha_interval with agreement
    weights ``w`` (K, K); ``summed`` (N, K) and ``bias`` (R, K) as for kappa_S."""
    observed = chance.observed_weighted_per_item(table.counts, table.m, w)
    out = {
        "fleiss_kappa_w": from_totals(
            chance.fleiss_weighted(table, observed, w, keep), SINGLE_CATEGORY, keep
        ),
    }
    ac2, bp_w = chance.gwet_and_bp(table, observed, w, keep)
    out["ac2"] = from_totals(ac2, SINGLE_CATEGORY, keep)
    out["bp_w"] = from_totals(bp_w, NO_PAIRABLE, keep)
    by_rank, by_grade = ordinal.alphas(table, keep)
    out["alpha_ordinal"] = from_totals(by_rank, SINGLE_CATEGORY, keep)
    out["alpha_interval"] = from_totals(by_grade, SINGLE_CATEGORY, keep)
    expected = ordinal.chance_weighted_per_item(table, summed, bias, w)
    ao = float(observed.mean()) if table.n_pairable else float("nan")
    ae = float(expected.mean()) if table.n_pairable else float("nan")
    resampled = None
    if bootstrap and table.n_pairable:
        boot = kappa_s.Bootstrap(table, observed, w)
        resampled = boot.replicates if boot.feasible else None
    out["kappa_s_w"] = Estimator(
        float(kappa_from(np.asarray(ao), np.asarray(ae))),
        table.n_pairable,
        "every rater used one and the same single category: chance agreement is 1",
        lambda: kappa_s.leave_one_out(table, observed, expected, w),
        resampled,
    )
    return out
