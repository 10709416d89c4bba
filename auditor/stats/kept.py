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
    looks_by_category (G, K)  category counts of every human look (the prevalence P without a
                      pairable item, as ``measures._prevalence`` takes it)
    labels, items (G,), rater_labels (G, R)  every label, item and rater's labels, pairable
                      or not (n_labels, n_items; the raters a window still holds)
    products (G, K, K)   sum_u c_u c_u' / (m_u (m_u - 1)); with inverse_m1 (G,), the sum
                      of 1 / (m_u - 1), the weighted observed agreement for any weights w:
                      sum_u Ao^w_u = <w, products> - inverse_m1 (chance.py)
    coincidences (G, K, K)  sum_u c_u c_u' / (m_u - 1): alpha's coincidence matrix (ordinal.py)
    model_* (G, R, ...), model_pair_key (M,), model_pair_weight (1, M)  model raters' S and
                      kappa_VA against the human group (``kept_models``)
    s_items, s_ao, s_amax (G, R)  S against the group (``group.against_group``), over rater
                      p's items with m_u >= 3: their number, sum of Ao and Amax of the others
                      (pairs among the others agreeing with p's category, the best category's)
    s_share (G, R, K) p's categories on those items
    confusion (G, R, K, K)  T_p[c, k]: over p's pairable items she labeled c, the share of the
                      other group raters who gave k (``reading.rater_confusion``; the rows
                      normalised are her confusion, with her counts a_pc her grade bias)
    triple_key (T,), triple_weight (1, T)  T_pqr = sum_{u: p, q, r in R_u} 1/((m_u-1)(m_u-2)),
                      sparse over the rater triples that shared an item (``kept_triples``): S's
                      chance term is a quadratic form of the biases v in it; project totals
                      only (per group they grow with the items: 32 MB at 100k items, 200
                      raters, 5 a item, against at most C(R, 3) entries ungrouped)
    difference_key (P,), pair_difference (G, P, K + 1)  per group, each rater pair's
                      difference of marginals on shared items ([a gave c] - [b gave c]) and
                      its shared items: the bias index's group jackknife (sparse by pair)
    pair_key (P,), pair_confusion (1, P, K, K)  each rater pair's confusion table over the
                      items both labeled, project totals only (``kept_pairs``: not grouped;
                      every jackknife replicate carries the same totals)

The same ``contributions`` builds them from label arrays for the one-shot ``auditor stats``
and for the service's updates, so the two cannot drift. The measures read from the sums are in
``kept_estimates``; the grouped jackknife's interval in ``group_jackknife``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from auditor.domain import CollapsePolicy, LabelArrays
from auditor.stats import kept_models, kept_pairs
from auditor.stats import kept_triples as triples
from auditor.stats.group import _without_rater
from auditor.stats.kappa import observed_per_item
from auditor.stats.reading import confusion_carry
from auditor.stats.selfagreement import pairs_agreeing
from auditor.stats.tables import GroupTable, collapse, group_table, within_item_pairs

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
    "looks_by_category",
    "labels",
    "items",
    "rater_labels",
    "s_items",
    "s_ao",
    "s_amax",
    "s_share",
    "confusion",
    "products",
    "inverse_m1",
    "coincidences",
    *kept_models.DENSE,
)
# The project totals kept without groups, sparse: (key array, values array) names.
TABLES = (
    ("triple_key", "triple_weight"),
    ("pair_key", "pair_confusion"),
    ("model_pair_key", "model_pair_weight"),
)
_UNGROUPED = tuple(name for table in TABLES for name in table)
# Sparse tables kept per group: keys (T,) shared by the groups, values (G, T, ...); a group's
# payload holds its nonzero keys only.
GROUPED_TABLES = (("difference_key", "pair_difference"),)
_GROUPED = tuple(name for table in GROUPED_TABLES for name in table)
# The arrays with a rater axis at 1 (and 2 for the pair tables): ``widened`` pads them.
_BY_RATER = (
    "rater_counts",
    "sa_sum",
    "sa_items",
    "looks",
    "inverse_m",
    "effect_m",
    "s_items",
    "s_ao",
    "s_amax",
    "s_share",
    "confusion",
    "rater_labels",
    *kept_models.DENSE,
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
    looks_by_category: np.ndarray
    labels: np.ndarray
    items: np.ndarray
    rater_labels: np.ndarray
    s_items: np.ndarray
    s_ao: np.ndarray
    s_amax: np.ndarray
    s_share: np.ndarray
    confusion: np.ndarray
    products: np.ndarray
    inverse_m1: np.ndarray
    coincidences: np.ndarray
    model_items: np.ndarray
    model_ao: np.ndarray
    model_amax: np.ndarray
    model_share: np.ndarray
    model_po: np.ndarray
    model_pm: np.ndarray
    model_prop: np.ndarray
    triple_key: np.ndarray
    triple_weight: np.ndarray
    pair_key: np.ndarray
    pair_confusion: np.ndarray
    model_pair_key: np.ndarray
    model_pair_weight: np.ndarray
    difference_key: np.ndarray
    pair_difference: np.ndarray

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
        """Every array by name: the grouped sums and tables and the ungrouped tables."""
        return {**self.per_group(), **self.ungrouped()}

    def additive(self) -> dict[str, np.ndarray]:
        """The dense sums kept per group (leading axis G)."""
        return {name: getattr(self, name) for name in _ADDITIVE}

    def per_group(self) -> dict[str, np.ndarray]:
        """What a group's payload holds: the dense sums and the grouped sparse tables."""
        return {**self.additive(), **{name: getattr(self, name) for name in _GROUPED}}

    def ungrouped(self) -> dict[str, np.ndarray]:
        """The project totals kept without groups (their own payload): the rater triples'
        and pairs' sparse tables, keys (T,) and values (1, T, ...)."""
        return {name: getattr(self, name) for name in _UNGROUPED}

    def with_ungrouped(self, **tables: np.ndarray) -> KeptStats:
        return dataclasses.replace(self, **tables)

    def without_ungrouped(self) -> KeptStats:
        k = self.n_categories
        return self.with_ungrouped(**no_tables(k))

    def _with(self, dense: dict[str, np.ndarray], grouped: dict[str, np.ndarray]) -> KeptStats:
        """Other grouped sums and tables, the same ungrouped tables."""
        return KeptStats(**dense, **grouped, **self.ungrouped())

    def _grouped(self, how: str) -> dict[str, np.ndarray]:
        """The grouped tables' values summed ("total") or the total less each group."""
        out: dict[str, np.ndarray] = {}
        for key, values in GROUPED_TABLES:  # bounded by the grouped tables (one)
            v = getattr(self, values)
            summed = v.sum(axis=0, keepdims=True)
            out[key], out[values] = getattr(self, key), summed if how == "total" else summed - v
        return out

    def plus(self, other: KeptStats, sign: float = 1.0) -> KeptStats:
        """self + sign * other (same groups, raters and categories)."""
        if (other.n_groups, other.n_raters, other.n_categories) != (
            self.n_groups,
            self.n_raters,
            self.n_categories,
        ):
            raise ValueError("kept statistics of different shapes cannot be merged")
        dense = {k: v + sign * getattr(other, k) for k, v in self.additive().items()}
        tables: dict[str, np.ndarray] = {}
        for key, values in (*TABLES, *GROUPED_TABLES):  # the sparse tables
            union, (mine, theirs) = triples.align(
                [
                    (getattr(self, key), getattr(self, values)),
                    (getattr(other, key), getattr(other, values)),
                ]
            )
            tables[key], tables[values] = triples.pruned(union, mine + sign * theirs)
        return KeptStats(**dense, **tables)

    def minus(self, other: KeptStats) -> KeptStats:
        return self.plus(other, -1.0)

    def total(self) -> KeptStats:
        """The project's sums: one group holding the sum over groups."""
        dense = {k: v.sum(axis=0, keepdims=True) for k, v in self.additive().items()}
        return self._with(dense, self._grouped("total"))

    def without_each_group(self) -> KeptStats:
        """G states, the g-th the total without group g (the jackknife's deletions); the
        ungrouped tables stay the totals in each."""
        dense = {k: v.sum(axis=0, keepdims=True) - v for k, v in self.additive().items()}
        return self._with(dense, self._grouped("without"))

    def widened(self, n_raters: int) -> KeptStats:
        """The same sums with raters appended (zero rows) up to ``n_raters`` (the sparse
        tables' keys do not depend on the number of raters)."""
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

        padded = {name: pad(getattr(self, name), (1,)) for name in _BY_RATER}
        return dataclasses.replace(
            self,
            **padded,
            pair_weight=pad(self.pair_weight, (1, 2)),
            agree=pad(self.agree, (1, 2)),
        )

    def group(self, g: int) -> KeptStats:
        """Group g's sums and grouped tables (its nonzero keys), without the ungrouped ones."""
        dense = {k: v[g : g + 1] for k, v in self.additive().items()}
        grouped: dict[str, np.ndarray] = {}
        for key, values in GROUPED_TABLES:  # bounded by the grouped tables (one)
            grouped[key], grouped[values] = triples.pruned(
                getattr(self, key), getattr(self, values)[g : g + 1]
            )
        return KeptStats(**dense, **grouped, **no_tables(self.n_categories))

    @staticmethod
    def stack(parts: list[KeptStats]) -> KeptStats:
        """The groups of ``parts`` one after the other (grouped tables on the union of their
        keys); their ungrouped tables summed."""
        dense = {k: np.concatenate([getattr(p, k) for p in parts]) for k in _ADDITIVE}
        tables: dict[str, np.ndarray] = {}
        for key, values in TABLES:  # the triples, the pairs
            union, aligned = triples.align([(getattr(p, key), getattr(p, values)) for p in parts])
            tables[key], tables[values] = union, np.sum(aligned, axis=0)
        for key, values in GROUPED_TABLES:  # bounded by the grouped tables (one)
            union, aligned = triples.align([(getattr(p, key), getattr(p, values)) for p in parts])
            tables[key], tables[values] = union, np.concatenate(aligned)
        return KeptStats(**dense, **tables)


def no_tables(k: int) -> dict[str, np.ndarray]:
    return {
        "triple_key": np.zeros(0, dtype=np.int64),
        "triple_weight": np.zeros((1, 0)),
        "pair_key": np.zeros(0, dtype=np.int64),
        "pair_confusion": np.zeros((1, 0, k, k)),
        "model_pair_key": np.zeros(0, dtype=np.int64),
        "model_pair_weight": np.zeros((1, 0)),
    }


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
        looks_by_category=np.zeros((g, k)),
        labels=np.zeros(g),
        items=np.zeros(g),
        rater_labels=np.zeros((g, r)),
        s_items=np.zeros((g, r)),
        s_ao=np.zeros((g, r)),
        s_amax=np.zeros((g, r)),
        s_share=np.zeros((g, r, k)),
        confusion=np.zeros((g, r, k, k)),
        products=np.zeros((g, k, k)),
        inverse_m1=np.zeros(g),
        coincidences=np.zeros((g, k, k)),
        model_items=np.zeros((g, r)),
        model_ao=np.zeros((g, r)),
        model_amax=np.zeros((g, r)),
        model_share=np.zeros((g, r, k)),
        model_po=np.zeros((g, r)),
        model_pm=np.zeros((g, r)),
        model_prop=np.zeros((g, r, k)),
        **no_tables(k),
        difference_key=np.zeros(0, dtype=np.int64),
        pair_difference=np.zeros((g, 0, k + 1)),
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
    # every label and item, pairable or not: n_labels, n_items, and which raters a window holds
    label_group = group_of_item[labels.item]
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
    human_look = ~labels.rater_is_model[labels.rater]
    looks_by_category = np.bincount(
        group_of_item[labels.item[human_look]] * k + labels.category[human_look],
        minlength=groups * k,
    )
    del human_look
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
        looks_by_category=looks_by_category.reshape(groups, k).astype(float),
        labels=np.bincount(label_group, minlength=groups).astype(float),
        items=np.bincount(group_of_item, minlength=groups).astype(float),
        rater_labels=np.bincount(label_group * r + slot[labels.rater], minlength=groups * r)
        .reshape(groups, r)
        .astype(float),
        confusion=_confusion(table, g_label * r + s_label, groups, r),
        **_against_group(table, g_item, s_label, groups, r),
        **_pairs(table, s_label, r),
        **_differences(table, g_item, s_label, groups, r),
        **_ordinal(table, g_item, groups),
        **kept_models.model_sums(table, cells, labels.rater_is_model, g_item, slot, groups, r),
    )


def _ordinal(table: GroupTable, g_item: np.ndarray, groups: int) -> dict[str, np.ndarray]:
    """The ordinal coefficients' per-item sums (module docstring), per group."""
    k = table.counts.shape[1]
    counts = table.counts.astype(float)
    m = table.m.astype(float)
    products = np.zeros((groups, k, k))
    coincidences = np.zeros((groups, k, k))
    for c in range(k):  # bounded by the number of categories
        for d in range(k):  # bounded by the number of categories
            both = counts[:, c] * counts[:, d] / (m - 1.0)
            coincidences[:, c, d] = np.bincount(g_item, weights=both, minlength=groups)
            products[:, c, d] = np.bincount(g_item, weights=both / m, minlength=groups)
    inverse_m1 = np.bincount(g_item, weights=1.0 / (m - 1.0), minlength=groups)
    return {"products": products, "inverse_m1": inverse_m1, "coincidences": coincidences}


def _differences(
    table: GroupTable, g_item: np.ndarray, s_label: np.ndarray, groups: int, r: int
) -> dict[str, np.ndarray]:
    keys, values = kept_pairs.pair_differences(table, g_item, s_label, groups, r)
    return {"difference_key": keys, "pair_difference": values}


def _pairs(table: GroupTable, s_label: np.ndarray, r: int) -> dict[str, np.ndarray]:
    keys, tables = kept_pairs.pair_tables(table, s_label, r)
    return {"pair_key": keys, "pair_confusion": tables}


def _confusion(table: GroupTable, rater_code: np.ndarray, groups: int, r: int) -> np.ndarray:
    """T per (group, rater) code of each label (``reading.rater_confusion``), (G, R, K, K)."""
    k, n_codes = table.counts.shape[1], groups * r
    carry = confusion_carry(table)
    code = rater_code * k + table.label_category
    carried = np.empty((n_codes * k, k + 1))
    for column in range(k + 1):  # bounded by the number of categories
        carried[:, column] = np.bincount(
            code, weights=carry[table.label_item, column], minlength=n_codes * k
        )
    out = carried[:, :k].copy()
    # her own label is not one of the others'
    out[np.arange(n_codes * k), np.tile(np.arange(k), n_codes)] -= carried[:, k]
    return out.reshape(groups, r, k, k)


def _against_group(
    table: GroupTable, g_item: np.ndarray, s_label: np.ndarray, groups: int, r: int
) -> dict[str, np.ndarray]:
    """S against the group's per-item sums (module docstring): each label on an item with
    m_u >= 3 adds to its rater's count, Ao, Amax and category; each triple of its raters adds
    w_u to T."""
    k = table.counts.shape[1]
    observed_uc, best_uc, inverse = _without_rater(table)
    three = inverse[table.label_item] > 0
    code = table.label_code[three]
    g_label = g_item[table.label_item[three]]
    rater_code = g_label * r + s_label[three]
    s_items = np.bincount(rater_code, minlength=groups * r).astype(float)
    s_ao = np.bincount(rater_code, weights=observed_uc[code], minlength=groups * r)
    s_amax = np.bincount(rater_code, weights=best_uc[code], minlength=groups * r)
    s_share = np.bincount(
        rater_code * k + table.label_category[three], minlength=groups * r * k
    ).astype(float)
    summed = triples.Accumulator(r)
    for i, j, h in triples.within_item_triples(table.label_item, table.starts, table.m):
        a, b, c = triples.sorted3(s_label[i], s_label[j], s_label[h])
        summed.add(a, b, c, inverse[table.label_item[i]])
    keys, weights = summed.result()
    return {
        "s_items": s_items.reshape(groups, r),
        "s_ao": s_ao.reshape(groups, r),
        "s_amax": s_amax.reshape(groups, r),
        "s_share": s_share.reshape(groups, r, k),
        "triple_key": keys,
        "triple_weight": weights,
    }
