"""Kept statistics: mergeable sums over items that the point estimates are functions of.

Every measure covered here is a function of sums over pairable items (docs/architecture.md,
"Kept statistics"). The sums are kept per group of items (a fixed number G of groups, the
group of an item chosen by a hash of its id), so

* the project's state is the sum over groups, and adding or removing one item's contribution
  touches one group;
* an item's contribution depends on that item's labels only (the collapse policy and the
  group are per item), so an update reads the labels of the items that changed, subtracts
  their old contribution and adds the new one;
* a delete-a-group jackknife (the estimate without each group) needs no label read.

Sums kept per group g (R raters in the kept numbering, K categories):

    n (G,)            pairable items
    ao (G,)           sum_u Ao_u                               (observed agreement, Fleiss)
    m (G,)            sum_u m_u                                (Fleiss)
    diagonal (G,)     sum_u sum_c c_uc (c_uc - 1) / (m_u - 1)  (alpha's coincidence diagonal)
    counts (G, K)     sum_u c_uc                               (Fleiss, alpha, prevalence P)
    rater_counts (G, R, K)  a_pc, pairable items rater p gave c (kappa_S's biases v_pc)
    pair_weight (G, R, R)   W_pq = sum_{u: p<q in R_u} 1 / (m_u (m_u - 1)), upper triangle
    agree (G, R, R, K)      N_pqc = sum_{u: p<q in R_u, both gave c} 1 / C(m_u, 2)
    sa_sum, sa_items, looks (G, R)  repeat tallies: sum of SA_pu, repeated items, looks
    inverse_m, effect_m (G, R)  sum over p's pairable items of 1/m_u and (1 - 1/m_u)/m_u
    ao_effect (G,)    sum_u (1 - 1/m_u) Ao_u      (the R&R split: its terms are linear in SA_p)
    shares (G, K)     sum_u c_uc / m_u                          (Gwet's pi_c)
    single (G, K)     category counts of items with one group label (Gwet's pi_c counts them)
    agreeing (G, K)   sum_u c_uc (c_uc - 1);  spread (G, K)  sum_u c_uc (m_u - 1)
                      (specific agreement per category)

The same ``contributions`` builds them from label arrays for the one-shot ``auditor stats``
and for the service's updates, so the two cannot drift.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from auditor.domain import CollapsePolicy, LabelArrays, RaterModel, RhoMode, RhoUnrated
from auditor.stats import rho as rho_module
from auditor.stats.alpha import _alpha
from auditor.stats.coefficients import category_key
from auditor.stats.estimators import value_range
from auditor.stats.kappa import _fleiss, kappa_from, observed_per_item
from auditor.stats.selfagreement import (
    chance_agreement,
    corrected_for_chance,
    kappa_to_reliability,
    pairs_agreeing,
)
from auditor.stats.tables import collapse, group_table, within_item_pairs
from auditor.stats.totals import safe_ratio

# Groups for the delete-a-group jackknife; fixed per project (changing it is a rebuild).
DEFAULT_GROUPS = 20

# The measures whose point estimate (and grouped jackknife) comes from the kept sums.
KEPT_MEASURES = (
    "observed_agreement",
    "fleiss_kappa",
    "krippendorff_alpha",
    "kappa_s",
    "mean_self_agreement",
    "expected_agreement",
    "repeatability",
    "rater_effect",
    "ac1",
    "bp",
    "prevalence_index",
)
# Per category: estimates keyed "name:c" (``coefficients.category_key``).
KEPT_CATEGORY_MEASURES = ("category_share", "specific_agreement")

_ADDITIVE = (
    "n",
    "ao",
    "m",
    "diagonal",
    "counts",
    "rater_counts",
    "pair_weight",
    "agree",
    "sa_sum",
    "sa_items",
    "looks",
    "inverse_m",
    "effect_m",
    "ao_effect",
    "shares",
    "single",
    "agreeing",
    "spread",
)


def item_groups(item_ids: np.ndarray, groups: int) -> np.ndarray:
    """The group of each item id: a multiplicative hash (Knuth) mod ``groups``, so
    consecutive ids spread over every group; shape as ``item_ids``."""
    hashed = (np.asarray(item_ids, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(1 << 32)
    result: np.ndarray = (hashed % np.uint64(groups)).astype(np.int64)
    return result


@dataclass(frozen=True)
class KeptStats:
    """The kept sums per group (see the module docstring for each array's meaning)."""

    n: np.ndarray
    ao: np.ndarray
    m: np.ndarray
    diagonal: np.ndarray
    counts: np.ndarray
    rater_counts: np.ndarray
    pair_weight: np.ndarray
    agree: np.ndarray
    sa_sum: np.ndarray
    sa_items: np.ndarray
    looks: np.ndarray
    inverse_m: np.ndarray
    effect_m: np.ndarray
    ao_effect: np.ndarray
    shares: np.ndarray
    single: np.ndarray
    agreeing: np.ndarray
    spread: np.ndarray

    @property
    def n_groups(self) -> int:
        return int(self.n.shape[0])

    @property
    def n_raters(self) -> int:
        return int(self.rater_counts.shape[1])

    @property
    def n_categories(self) -> int:
        return int(self.counts.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _ADDITIVE}

    def plus(self, other: KeptStats, sign: float = 1.0) -> KeptStats:
        """self + sign * other (same groups, raters and categories)."""
        if (other.n_groups, other.n_raters, other.n_categories) != (
            self.n_groups,
            self.n_raters,
            self.n_categories,
        ):
            raise ValueError("kept statistics of different shapes cannot be merged")
        return KeptStats(**{k: v + sign * getattr(other, k) for k, v in self.arrays().items()})

    def minus(self, other: KeptStats) -> KeptStats:
        return self.plus(other, -1.0)

    def total(self) -> KeptStats:
        """The project's sums: one group holding the sum over groups."""
        return KeptStats(**{k: v.sum(axis=0, keepdims=True) for k, v in self.arrays().items()})

    def without_each_group(self) -> KeptStats:
        """G states, the g-th the total without group g (the jackknife's deletions)."""
        return KeptStats(**{k: v.sum(axis=0, keepdims=True) - v for k, v in self.arrays().items()})

    def widened(self, n_raters: int) -> KeptStats:
        """The same sums with raters appended (zero rows) up to ``n_raters``."""
        extra = n_raters - self.n_raters
        if extra < 0:
            raise ValueError("kept statistics cannot lose raters")
        if extra == 0:
            return self

        def pad(v: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
            widths = [(0, 0)] * v.ndim
            for axis in axes:
                widths[axis] = (0, extra)
            return np.pad(v, widths)

        return dataclasses.replace(
            self,
            rater_counts=pad(self.rater_counts, (1,)),
            pair_weight=pad(self.pair_weight, (1, 2)),
            agree=pad(self.agree, (1, 2)),
            sa_sum=pad(self.sa_sum, (1,)),
            sa_items=pad(self.sa_items, (1,)),
            looks=pad(self.looks, (1,)),
            inverse_m=pad(self.inverse_m, (1,)),
            effect_m=pad(self.effect_m, (1,)),
        )

    def group(self, g: int) -> KeptStats:
        return KeptStats(**{k: v[g : g + 1] for k, v in self.arrays().items()})

    @staticmethod
    def stack(parts: list[KeptStats]) -> KeptStats:
        return KeptStats(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in _ADDITIVE})


def empty(groups: int, n_raters: int, n_categories: int) -> KeptStats:
    g, r, k = groups, n_raters, n_categories
    return KeptStats(
        n=np.zeros(g),
        ao=np.zeros(g),
        m=np.zeros(g),
        diagonal=np.zeros(g),
        counts=np.zeros((g, k)),
        rater_counts=np.zeros((g, r, k)),
        pair_weight=np.zeros((g, r, r)),
        agree=np.zeros((g, r, r, k)),
        sa_sum=np.zeros((g, r)),
        sa_items=np.zeros((g, r)),
        looks=np.zeros((g, r)),
        inverse_m=np.zeros((g, r)),
        effect_m=np.zeros((g, r)),
        ao_effect=np.zeros(g),
        shares=np.zeros((g, k)),
        single=np.zeros((g, k)),
        agreeing=np.zeros((g, k)),
        spread=np.zeros((g, k)),
    )


def contributions(
    labels: LabelArrays,
    policy: CollapsePolicy,
    group_of_item: np.ndarray,
    groups: int,
    rater_slot: np.ndarray | None = None,
    n_slots: int | None = None,
) -> KeptStats:
    """The kept sums of ``labels`` (every label of each item they hold), per group.

    group_of_item : (n_items,), the group of each item index of ``labels``.
    rater_slot : (n_raters,), the kept numbering of each rater index (default: the same);
    n_slots : raters in the kept numbering (default: ``labels.n_raters``).
    """
    slot = np.arange(labels.n_raters) if rater_slot is None else np.asarray(rater_slot)
    r = labels.n_raters if n_slots is None else int(n_slots)
    k = labels.n_categories
    out = empty(groups, r, k)
    if labels.n_labels == 0:
        return out
    cells = collapse(labels, policy)
    table = group_table(cells, labels.rater_is_model)
    g_item = group_of_item[table.items]
    m = table.m.astype(float)
    n = np.bincount(g_item, minlength=groups).astype(float)
    observed = observed_per_item(table.counts, table.m)
    ao = np.bincount(g_item, weights=observed, minlength=groups)
    inverse = 1.0 / m
    ao_effect = np.bincount(g_item, weights=(1.0 - inverse) * observed, minlength=groups)
    agreeing = (table.counts * (table.counts - 1)).sum(axis=1)
    diagonal = np.bincount(g_item, weights=agreeing / (m - 1.0), minlength=groups)
    m_sum = np.bincount(g_item, weights=m, minlength=groups)
    g_label = g_item[table.label_item]
    counts = np.bincount(g_label * k + table.label_category, minlength=groups * k)
    s_label = slot[table.label_rater]
    rater_counts = np.bincount(
        (g_label * r + s_label) * k + table.label_category, minlength=groups * r * k
    )
    shares = np.bincount(
        g_label * k + table.label_category, weights=inverse[table.label_item], minlength=groups * k
    )
    per_item = table.counts.astype(float)
    agreeing_c = np.zeros((groups, k))
    spread_c = np.zeros((groups, k))
    for c in range(k):  # bounded by the number of categories
        column = per_item[:, c]
        agreeing_c[:, c] = np.bincount(g_item, weights=column * (column - 1.0), minlength=groups)
        spread_c[:, c] = np.bincount(g_item, weights=column * (m - 1.0), minlength=groups)
    human = ~labels.rater_is_model[cells.rater]
    human_item, human_category = cells.item[human], cells.category[human]
    lone = np.bincount(human_item, minlength=cells.n_items)[human_item] == 1
    single = np.bincount(
        group_of_item[human_item[lone]] * k + human_category[lone], minlength=groups * k
    )
    del human, human_item, human_category, lone
    rater_code = g_label * r + s_label
    inverse_m = np.bincount(rater_code, weights=inverse[table.label_item], minlength=groups * r)
    effect_m = np.bincount(
        rater_code, weights=((1.0 - inverse) * inverse)[table.label_item], minlength=groups * r
    )
    pair_weight = np.zeros(groups * r * r)
    agree = np.zeros(groups * r * r * k)
    weight = 1.0 / (m * (m - 1.0))
    # chunks of 2**20 label pairs: a dozen arrays of 8 MB at the peak
    for i, j in within_item_pairs(table.label_item, table.starts, table.m, max_pairs=1 << 20):
        si, sj = s_label[i], s_label[j]
        low, high = np.minimum(si, sj), np.maximum(si, sj)
        code = g_label[i] * (r * r) + low * r + high
        w = weight[table.label_item[i]]
        pair_weight += np.bincount(code, weights=w, minlength=pair_weight.shape[0])
        same = table.label_category[i] == table.label_category[j]
        agree += np.bincount(
            code[same] * k + table.label_category[i][same],
            weights=2.0 * w[same],
            minlength=agree.shape[0],
        )
    # repeat tallies of human raters, on every item (pairable or not)
    repeat_rater = cells.rater[cells.repeat_cell]
    human = ~labels.rater_is_model[repeat_rater]
    repeat_rater = repeat_rater[human]
    repeat_counts = cells.repeat_counts[human]
    code = group_of_item[cells.item[cells.repeat_cell][human]] * r + slot[repeat_rater]
    sa_sum = np.bincount(code, weights=pairs_agreeing(repeat_counts), minlength=groups * r)
    sa_items = np.bincount(code, minlength=groups * r)
    looks = np.bincount(code, weights=repeat_counts.sum(axis=1), minlength=groups * r)
    return KeptStats(
        n=n,
        ao=ao.astype(float),
        m=m_sum.astype(float),
        diagonal=diagonal.astype(float),
        counts=counts.reshape(groups, k).astype(float),
        rater_counts=rater_counts.reshape(groups, r, k).astype(float),
        pair_weight=pair_weight.reshape(groups, r, r),
        agree=agree.reshape(groups, r, r, k),
        sa_sum=sa_sum.reshape(groups, r).astype(float),
        sa_items=sa_items.reshape(groups, r).astype(float),
        looks=looks.reshape(groups, r).astype(float),
        inverse_m=inverse_m.reshape(groups, r).astype(float),
        effect_m=effect_m.reshape(groups, r).astype(float),
        ao_effect=ao_effect.astype(float),
        shares=shares.reshape(groups, k).astype(float),
        single=single.reshape(groups, k).astype(float),
        agreeing=agreeing_c,
        spread=spread_c,
    )


# --- point estimates: each a function of stacked states (S states -> (S,) values) ---------


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
    state: KeptStats, level: float = 0.95, rho: RhoOptions | None = None
) -> dict[str, KeptEstimate]:
    """Every kept measure's estimate (NaN -> None) with its grouped jackknife interval; rho
    too when ``rho`` gives settings the kept sums cover."""
    total = state.total()
    dropped = state.without_each_group()
    used = (state.n > 0) | (state.sa_items.sum(axis=1) > 0)
    out = {}
    functions = {**ESTIMATORS, **category_estimators(state.n_categories)}
    if rho is not None and rho.covered:
        functions["rho"] = lambda s: _rho(s, rho)
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


def grouped_jackknife(
    estimate: float,
    replicates: np.ndarray,
    level: float,
    floor: float = -1.0,
    ceiling: float = 1.0,
) -> tuple[float | None, float | None, str | None]:
    """Delete-a-group jackknife: se^2 = (G-1)/G sum (theta_(g) - mean)^2 over the G groups
    holding items, with a t quantile on G - 1 degrees of freedom (Kott 2001, "The
    delete-a-group jackknife")."""
    g = replicates.shape[0]
    if g < 2:
        return None, None, "the grouped jackknife needs items in at least two groups"
    if not np.isfinite(replicates).all():
        return None, None, "undefined once some group is left out"
    se = math.sqrt((g - 1) / g * float(((replicates - replicates.mean()) ** 2).sum()))
    half = t_quantile(0.5 + level / 2.0, g - 1) * se
    # cut to the measure's range, as today's intervals are (estimators.value_range)
    low = max(estimate - half, min(floor, estimate))
    return low, min(estimate + half, max(ceiling, estimate)), None


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) by Lentz's continued fraction."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _incomplete_beta(b, a, 1.0 - x)
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for step in range(1, 300):  # converges in a few dozen steps for these arguments
        m = float(step)
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f / a


def t_quantile(p: float, df: int) -> float:
    """The p-quantile (p > 0.5) of Student's t with ``df`` degrees of freedom, by bisection
    on its distribution function."""
    low, high = 0.0, 1e3
    for _ in range(200):
        middle = 0.5 * (low + high)
        cdf = 1.0 - 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + middle * middle))
        if cdf < p:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)
