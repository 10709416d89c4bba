"""Point estimates from the kept sums (``auditor.stats.kept``), and their delete-a-group
jackknife intervals (docs/architecture.md, "Kept statistics").

Each estimator is a function of stacked states: ``KeptStats`` with S rows -> S values, NaN
where undefined; the estimate is its value on the total, the jackknife its values on the
total without each group. The formulas reuse the full path's functions (``kappa._fleiss``,
``alpha._alpha``, ``kappa_from``, the rater model's, ``rho.evaluate``) so they cannot drift.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from auditor.domain import RaterModel, RhoMode, RhoUnrated
from auditor.stats import kept_models
from auditor.stats import kept_triples as triples
from auditor.stats import rho as rho_module
from auditor.stats.alpha import _alpha
from auditor.stats.coefficients import category_key
from auditor.stats.estimators import value_range
from auditor.stats.group import s_from
from auditor.stats.group_jackknife import grouped_jackknife
from auditor.stats.kappa import _fleiss, kappa_from
from auditor.stats.kept import KeptStats
from auditor.stats.ordinal import INTERVAL, ORDINAL, pair_index
from auditor.stats.ordinal import _alpha_function as ordinal_alpha_function
from auditor.stats.reading import grade_bias_from
from auditor.stats.selfagreement import (
    chance_agreement,
    corrected_for_chance,
    kappa_to_reliability,
)
from auditor.stats.totals import safe_ratio


def _observed(s: KeptStats) -> np.ndarray:
    return safe_ratio(s.ao, s.n)


def _fleiss_kappa(s: KeptStats) -> np.ndarray:
    return _fleiss(np.column_stack([s.n, s.ao, s.m, s.counts]))


def _alpha_nominal(s: KeptStats) -> np.ndarray:
    # alpha's totals are [sum m_u, sum D_u, sum c_u]: n = sum m_u = sum_c counts_c
    return _alpha(np.column_stack([s.m, s.diagonal, s.counts]))


def _kappa_s(s: KeptStats) -> np.ndarray:
    """kappa_S = (Ao - Ae) / (1 - Ae), N Ae = sum_{p != q} W_pq v_p . v_q (kappa_s.py)."""
    n_p = s.rater_counts.sum(axis=2)
    bias = s.rater_counts / np.maximum(n_p, 1.0)[..., None]
    products = np.einsum("spk,sqk->spq", bias, bias)
    # W is kept on p < q; the ordered sum counts each pair twice
    total = 2.0 * np.einsum("spq,spq->s", s.pair_weight, products)
    ae = safe_ratio(total, s.n)
    return np.where(s.n > 0, kappa_from(safe_ratio(s.ao, s.n), ae), np.nan)


def _mean_self_agreement(s: KeptStats) -> np.ndarray:
    rated = s.sa_items > 0
    sa = np.divide(s.sa_sum, s.sa_items, out=np.zeros_like(s.sa_sum), where=rated)
    return safe_ratio(sa.sum(axis=1), rated.sum(axis=1))


def _expected_agreement(s: KeptStats) -> np.ndarray:
    """kappa_BM = mean_u [1 - K/(K-1) (1 - Ao_u)] (rnr.py)."""
    k = s.n_categories
    result: np.ndarray = 1.0 - k / (k - 1) * (1.0 - safe_ratio(s.ao, s.n))
    return result


def _filled_sa(s: KeptStats) -> tuple[np.ndarray, np.ndarray]:
    """SA_p (S, R) with raters without repeats at the mean SA of those with; and whether any
    rater of each state has repeats (S,)."""
    rated = s.sa_items > 0
    sa = np.divide(s.sa_sum, s.sa_items, out=np.zeros_like(s.sa_sum), where=rated)
    any_rated = np.asarray(rated.sum(axis=1) > 0)
    mean = np.divide(sa.sum(axis=1), rated.sum(axis=1), out=np.zeros(s.n_groups), where=any_rated)
    return np.where(rated, sa, mean[:, None]), any_rated


def _repeatability(s: KeptStats) -> np.ndarray:
    """mean_u K/(K-1) (1 - a_u), a_u = mean SA of u's raters: linear in SA_p (rnr.slopes)."""
    k = s.n_categories
    sa, any_rated = _filled_sa(s)
    within = safe_ratio(np.einsum("sr,sr->s", sa, s.inverse_m), s.n)
    return np.where(any_rated, k / (k - 1) * (1.0 - within), np.nan)


def _rater_effect(s: KeptStats) -> np.ndarray:
    """mean_u K/(K-1) (1 - 1/m_u) (a_u - Ao_u)."""
    k = s.n_categories
    sa, any_rated = _filled_sa(s)
    total = np.einsum("sr,sr->s", sa, s.effect_m) - s.ao_effect
    return np.where(any_rated, k / (k - 1) * safe_ratio(total, s.n), np.nan)


def _ac1(s: KeptStats) -> np.ndarray:
    """Gwet's AC1: Ae = sum_c pi_c (1 - pi_c) / (K - 1), pi_c over pairable items' shares and
    single-label items (chance.py)."""
    k = s.n_categories
    items = s.n + s.single.sum(axis=1)
    pi = (s.shares + s.single) / np.maximum(items, 1e-300)[:, None]
    chance = np.einsum("sk,sk->s", pi, 1.0 - pi) / (k - 1)
    return safe_ratio(safe_ratio(s.ao, s.n) - chance, 1.0 - chance)


def _bp(s: KeptStats) -> np.ndarray:
    """Brennan-Prediger: chance 1/K."""
    chance = 1.0 / s.n_categories
    return safe_ratio(safe_ratio(s.ao, s.n) - chance, 1.0 - chance)


def _prevalence_index(s: KeptStats) -> np.ndarray:
    """PI = sqrt(K/(K-1) sum_c (P_c - 1/K)^2), P_c = c_c / sum m_u (reading.py); NaN without
    a pairable item."""
    k = s.n_categories
    centred = s.counts / np.maximum(s.m, 1e-300)[:, None] - 1.0 / k
    value = np.sqrt(k / (k - 1) * np.einsum("sk,sk->s", centred, centred))
    return np.where(s.n > 0, value, np.nan)


def _category_share(c: int) -> Callable[[KeptStats], np.ndarray]:
    def function(s: KeptStats) -> np.ndarray:
        return safe_ratio(s.counts[:, c], s.m)

    return function


def _specific_agreement(c: int) -> Callable[[KeptStats], np.ndarray]:
    def function(s: KeptStats) -> np.ndarray:
        return safe_ratio(s.agreeing[:, c], s.spread[:, c])

    return function


def category_estimators(k: int) -> dict[str, Callable[[KeptStats], np.ndarray]]:
    """The per-category kept measures, keyed "name:c"."""
    out: dict[str, Callable[[KeptStats], np.ndarray]] = {}
    for c in range(k):  # bounded by the number of categories
        out[category_key("category_share", c)] = _category_share(c)
        out[category_key("specific_agreement", c)] = _specific_agreement(c)
    return out


@dataclass(frozen=True)
class RhoOptions:
    """The project settings rho reads: its form, the unrated raters' policy, the rater model.
    Kept sums cover ``moments`` with ``pool`` or ``perfect`` (``exclude`` changes m_u and
    ``max_entropy`` needs every repeated cell's looks: those stay on the full path)."""

    mode: RhoMode = RhoMode.APPROXIMATE
    unrated: RhoUnrated = RhoUnrated.POOL
    rater_model: RaterModel = RaterModel.MOMENTS

    @property
    def covered(self) -> bool:
        return self.rater_model == RaterModel.MOMENTS and self.unrated != RhoUnrated.EXCLUDE


def _rho(s: KeptStats, options: RhoOptions) -> np.ndarray:
    """rho = (1/N) sum_c sum_{i<j} N_ijc GAE(i, j, c) (docs/measures.md, "rho"), with Y from
    the moments rater model on the kept repeat tallies and P the group's category shares."""
    out = np.full(s.n_groups, np.nan)
    for index in range(s.n_groups):  # bounded by G + 1 states (the jackknife's)
        n, counts = s.n[index], s.counts[index]
        rated = s.sa_items[index] > 0
        if n <= 0 or not rated.any():
            continue
        prevalence = counts / counts.sum()
        chance = float(chance_agreement(prevalence))
        if 1.0 - chance <= 1e-12:
            continue  # a single category: the rater model is undefined
        sa = np.divide(s.sa_sum[index], s.sa_items[index], out=np.zeros(s.n_raters), where=rated)
        reliability = np.where(rated, kappa_to_reliability(corrected_for_chance(sa, chance)), 0.0)
        y = rho_module.fill_unrated(reliability, rated, options.unrated)
        upper = s.agree[index]  # (R, R, K), p < q
        pairs = np.ascontiguousarray((upper + upper.transpose(1, 0, 2)).transpose(2, 0, 1))
        total = rho_module.evaluate(pairs, y[None, :], prevalence[None, :], options.mode)[0]
        out[index] = total / n
    return out


def _observed_weighted(s: KeptStats, w: np.ndarray) -> np.ndarray:
    """mean_u Ao^w_u = (<w, products> - inverse_m1) / N (chance.observed_weighted_per_item)."""
    return safe_ratio(np.einsum("skl,kl->s", s.products, w) - s.inverse_m1, s.n)


def _corrected(ao: np.ndarray, ae: np.ndarray) -> np.ndarray:
    return safe_ratio(ao - ae, 1.0 - ae)


def ordinal_estimators(w: np.ndarray) -> dict[str, Callable[[KeptStats], np.ndarray]]:
    """The weighted coefficients of ``coefficients.ordinal_estimators`` with weights w (K, K)."""
    k = w.shape[0]

    def fleiss_w(s: KeptStats) -> np.ndarray:
        shares = s.counts / np.maximum(s.m, 1e-300)[:, None]
        chance = np.einsum("sk,kl,sl->s", shares, w, shares)
        return _corrected(_observed_weighted(s, w), chance)

    def ac2(s: KeptStats) -> np.ndarray:
        items = s.n + s.single.sum(axis=1)
        pi = (s.shares + s.single) / np.maximum(items, 1e-300)[:, None]
        chance = float(w.sum()) / (k * (k - 1)) * np.einsum("sk,sk->s", pi, 1.0 - pi)
        return _corrected(_observed_weighted(s, w), chance)

    def bp_w(s: KeptStats) -> np.ndarray:
        return _corrected(_observed_weighted(s, w), np.full(s.n_groups, float(w.sum()) / k**2))

    def kappa_s_w(s: KeptStats) -> np.ndarray:
        n_p = s.rater_counts.sum(axis=2)
        bias = s.rater_counts / np.maximum(n_p, 1.0)[..., None]
        products = np.einsum("spk,kl,sql->spq", bias, w, bias)
        ae = safe_ratio(2.0 * np.einsum("spq,spq->s", s.pair_weight, products), s.n)
        return np.where(s.n > 0, kappa_from(_observed_weighted(s, w), ae), np.nan)

    def alpha(metric: str) -> Callable[[KeptStats], np.ndarray]:
        function = ordinal_alpha_function(k, metric)
        first, second = pair_index(k)

        def of(s: KeptStats) -> np.ndarray:
            totals = np.column_stack([s.m, s.counts, s.coincidences[:, first, second]])
            result: np.ndarray = function(totals)
            return result

        return of

    return {
        "kappa_s_w": kappa_s_w,
        "fleiss_kappa_w": fleiss_w,
        "ac2": ac2,
        "bp_w": bp_w,
        "alpha_ordinal": alpha(ORDINAL),
        "alpha_interval": alpha(INTERVAL),
    }


ESTIMATORS: dict[str, Callable[[KeptStats], np.ndarray]] = {
    "observed_agreement": _observed,
    "fleiss_kappa": _fleiss_kappa,
    "krippendorff_alpha": _alpha_nominal,
    "kappa_s": _kappa_s,
    "mean_self_agreement": _mean_self_agreement,
    "expected_agreement": _expected_agreement,
    "repeatability": _repeatability,
    "rater_effect": _rater_effect,
    "ac1": _ac1,
    "bp": _bp,
    "prevalence_index": _prevalence_index,
}


@dataclass(frozen=True)
class KeptEstimate:
    """A point estimate from the kept sums and its delete-a-group jackknife interval."""

    value: float | None
    low: float | None
    high: float | None
    groups_used: int
    reason: str | None


def estimates(
    state: KeptStats,
    level: float = 0.95,
    rho: RhoOptions | None = None,
    weights: np.ndarray | None = None,
) -> dict[str, KeptEstimate]:
    """Every kept measure's estimate (NaN -> None) with its grouped jackknife interval; rho
    too when ``rho`` gives settings the kept sums cover; the weighted (ordinal) coefficients
    with agreement ``weights`` (K, K)."""
    total = state.total()
    dropped = state.without_each_group()
    used = (state.n > 0) | (state.sa_items.sum(axis=1) > 0)
    out = {}
    functions = {**ESTIMATORS, **category_estimators(state.n_categories)}
    if rho is not None and rho.covered:
        functions["rho"] = lambda s: _rho(s, rho)
    if weights is not None:
        functions.update(ordinal_estimators(weights))
    for name, function in functions.items():
        value = float(function(total)[0])
        if not math.isfinite(value):
            out[name] = KeptEstimate(None, None, None, 0, "undefined")
            continue
        replicates = function(dropped)[used]
        floor, ceiling = value_range(name.split(":")[0], state.n_categories)
        low, high, reason = grouped_jackknife(value, replicates, level, floor, ceiling)
        out[name] = KeptEstimate(value, low, high, int(used.sum()), reason)
    return out


@dataclass(frozen=True)
class KeptRaters:
    """Per rater in the kept numbering (R,): SA_p, self_kappa, Y_p and x_p of the moments
    rater model (NaN without repeats, or with a single category in use for the last three),
    repeated items and looks. Point values only."""

    self_agreement: np.ndarray
    self_kappa: np.ndarray
    reliability: np.ndarray
    random_choice: np.ndarray
    n_repeated_items: np.ndarray
    n_presentations: np.ndarray


def rater_estimates(state: KeptStats) -> KeptRaters:
    """Each rater's self-agreement and rater model from the kept repeat tallies, with P the
    group's category shares on pairable items (every human look without one)."""
    total = state.total()
    shares = total.counts[0]
    if shares.sum() == 0:
        shares = total.looks_by_category[0]
    prevalence = shares / max(float(shares.sum()), 1.0)
    rated = total.sa_items[0] > 0
    sa = np.where(rated, total.sa_sum[0] / np.maximum(total.sa_items[0], 1.0), np.nan)
    chance = float(chance_agreement(prevalence))
    if 1.0 - chance <= 1e-12:
        undefined = np.full(sa.shape, np.nan)
        self_kappa, reliability = undefined, undefined
    else:
        self_kappa = corrected_for_chance(sa, chance)
        reliability = kappa_to_reliability(self_kappa)
    return KeptRaters(
        sa,
        self_kappa,
        reliability,
        1.0 - reliability,
        total.sa_items[0].astype(np.int64),
        total.looks[0].astype(np.int64),
    )


def s_against_group(s: KeptStats, scale: np.ndarray | None = None) -> np.ndarray:
    """Each rater's S against the others (S, R), NaN where undefined (``group.against_group``):
    Ae_p = share_p . T_p / n_p^2 with T_pc = sum_{q != r, both != p} T_pqr v_qc v_rc and v
    the state's rater biases. ``scale`` (S, R) multiplies T_p (the jackknife's replicates)."""
    n_p = s.rater_counts.sum(axis=2)
    bias = s.rater_counts / np.maximum(n_p, 1.0)[..., None]
    chance = triples.chance_terms(s.triple_key, s.triple_weight, bias)
    if scale is not None:
        chance *= scale[..., None]
    n = s.s_items
    ae = safe_ratio(np.einsum("srk,srk->sr", s.s_share, chance), n**2)
    result: np.ndarray = s_from(safe_ratio(s.s_ao, n), ae, safe_ratio(s.s_amax, n))
    return result


@dataclass(frozen=True)
class KeptAgainstGroup:
    """S against the group per rater (R,): value (NaN where undefined), items used, and the
    delete-a-group jackknife interval over the groups holding the rater's items (NaN where
    none; ``reason`` per rater says why)."""

    value: np.ndarray
    n: np.ndarray
    low: np.ndarray
    high: np.ndarray
    reason: tuple[str | None, ...]


def against_group_estimates(state: KeptStats, level: float | None = 0.95) -> KeptAgainstGroup:
    """S against the group of every rater from the kept sums; with ``level`` its interval by
    the delete-a-group jackknife: the replicate without group g recomputes n_p, Ao, Amax,
    p's categories and the biases v exactly, and scales p's chance term (an approximation:
    the triples are not grouped)."""
    total = state.total()
    value = s_against_group(total)[0]
    n = total.s_items[0].astype(np.int64)
    r = state.n_raters
    low, high = np.full(r, np.nan), np.full(r, np.nan)
    reasons: list[str | None] = [None] * r
    if level is None:
        return KeptAgainstGroup(value, n, low, high, tuple(reasons))
    # T_pqr is kept without groups (its size per group grows with the items): a replicate
    # takes p's chance term from the totals, with the biases v without group g, scaled by
    # the share of p's items left (her items in group g taken as typical of hers)
    dropped = state.without_each_group()
    left = safe_ratio(dropped.s_items, np.broadcast_to(total.s_items, dropped.s_items.shape))
    replicates = s_against_group(dropped, np.nan_to_num(left))
    for p in np.flatnonzero(np.isfinite(value)):  # bounded by the raters
        held = state.s_items[:, p] > 0
        lo, hi, why = grouped_jackknife(float(value[p]), replicates[held, p], level, -math.inf, 1.0)
        if lo is None or hi is None:
            reasons[p] = why
        else:
            low[p], high[p] = lo, hi
    return KeptAgainstGroup(value, n, low, high, tuple(reasons))


@dataclass(frozen=True)
class KeptGradeBias:
    """Each rater's grade bias on an ordinal scale (R,) (``reading.grade_bias_from``): value
    (NaN without a pairable item), her pairable items, and the delete-a-group jackknife
    interval over the groups holding her pairable items (NaN where none)."""

    value: np.ndarray
    n: np.ndarray
    low: np.ndarray
    high: np.ndarray


def grade_bias_estimates(state: KeptStats, level: float | None = 0.95) -> KeptGradeBias:
    total = state.total()
    value = grade_bias_from(total.confusion[0], total.rater_counts[0])
    n = total.rater_counts[0].sum(axis=1).astype(np.int64)
    r, k = state.n_raters, state.n_categories
    low, high = np.full(r, np.nan), np.full(r, np.nan)
    if level is None:
        return KeptGradeBias(value, n, low, high)
    dropped = state.without_each_group()
    held_by = state.rater_counts.sum(axis=2) > 0  # (G, R)
    for p in np.flatnonzero(np.isfinite(value)):  # bounded by the raters
        held = held_by[:, p]
        replicates = grade_bias_from(dropped.confusion[held, p], dropped.rater_counts[held, p])
        lo, hi, _ = grouped_jackknife(float(value[p]), replicates, level, -(k - 1.0), k - 1.0)
        if lo is not None and hi is not None:
            low[p], high[p] = lo, hi
    return KeptGradeBias(value, n, low, high)


@dataclass(frozen=True)
class KeptModelScores:
    """Per rater slot (R,) (models only are meaningful): S and kappa_VA against the human
    group, their items, and delete-a-group jackknife bounds (NaN where none)."""

    s: np.ndarray
    va: np.ndarray
    n: np.ndarray
    s_low: np.ndarray
    s_high: np.ndarray
    va_low: np.ndarray
    va_high: np.ndarray


def _model_values(s: KeptStats, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    n_p = s.rater_counts.sum(axis=2)
    bias = s.rater_counts / np.maximum(n_p, 1.0)[..., None]
    chance = kept_models.model_chance(s.model_pair_key, s.model_pair_weight, bias, s.n_raters)
    if scale is not None:
        chance *= scale[..., None]
    n = s.model_items
    values = kept_models.model_s(n, s.model_ao, s.model_amax, s.model_share, chance)
    va = kept_models.model_va(n, s.model_po, s.model_pm, s.model_share, s.model_prop)
    return values, va


def model_estimates(state: KeptStats, level: float | None = 0.95) -> KeptModelScores:
    """Every model slot's S and kappa_VA from the kept sums; with ``level`` their intervals:
    kappa_VA's replicates are exact, S's scale the model's chance term by its share of items
    left (the pair weights are not grouped), as for S against the group."""
    total = state.total()
    s_value, va_value = (v[0] for v in _model_values(total))
    r = state.n_raters
    bounds = [np.full(r, np.nan) for _ in range(4)]
    if level is not None:
        dropped = state.without_each_group()
        shape = dropped.model_items.shape
        left = safe_ratio(dropped.model_items, np.broadcast_to(total.model_items, shape))
        s_rep, va_rep = _model_values(dropped, np.nan_to_num(left))
        for t in np.flatnonzero(total.model_items[0] > 0):  # bounded by the raters
            held = state.model_items[:, t] > 0
            for index, (value, replicates, ceiling) in enumerate(
                ((s_value, s_rep, 1.0), (va_value, va_rep, 1.0))
            ):
                if not np.isfinite(value[t]):
                    continue
                lo, hi, _ = grouped_jackknife(
                    float(value[t]), replicates[held, t], level, -math.inf, ceiling
                )
                if lo is not None and hi is not None:
                    bounds[2 * index][t], bounds[2 * index + 1][t] = lo, hi
    n = total.model_items[0].astype(np.int64)
    return KeptModelScores(s_value, va_value, n, *bounds)
