"""``compute_measures``: every measure of docs/measures.md ("Project measures") for one set of
labels, with intervals."""

from __future__ import annotations

import dataclasses

import numpy as np

from auditor.domain import (
    IntervalMethod,
    LabelArrays,
    ProjectSettings,
    Scale,
    Weights,
)
from auditor.stats import (
    alpha,
    canonical,
    chance,
    coefficients,
    cohen,
    group,
    intervals,
    kappa,
    kappa_s,
    raters,
    reading,
    reporting,
    resampling,
    rho,
    rnr,
)
from auditor.stats.estimators import Estimator, from_totals, project_intervals
from auditor.stats.results import (
    CATEGORY_MEASURES,
    ORDINAL_MEASURES,
    PROJECT_MEASURES,
    CohenPair,
    Measure,
    MeasureSet,
    ModelResult,
    RaterResult,
)
from auditor.stats.selfagreement import RaterFit, SelfAgreement, fit, self_agreement
from auditor.stats.tables import Cells, GroupTable, collapse, group_table
from auditor.stats.totals import mean_of

# The seed used when bootstrap intervals are asked for without one; recorded in the result.
DEFAULT_SEED = 20110905

NO_PAIRABLE = "no pairable item (no item labeled by two human raters)"
SINGLE_CATEGORY = "a single category in use: chance agreement is 1"
NO_REPEATS = "no repeated presentations"


def _group_estimators(
    table: GroupTable,
    cells: Cells,
    chance: np.ndarray,
    settings: ProjectSettings,
    model: SelfAgreement,
    rater_fit: RaterFit,
    prevalence: np.ndarray,
    seed: int,
    extra: tuple[cohen.PairwiseCohen, np.ndarray, np.ndarray, np.ndarray | None],
) -> tuple[dict[str, Estimator], dict[str, str]]:
    """The project measures defined over pairable items (all but mean self-agreement).

    extra : (pairwise Cohen tables, rater sums S (N, K), biases v (R, K), agreement
    weights (K, K) on an ordinal scale, else None) for the measures of ``coefficients``.
    """
    keep = settings.interval_method != IntervalMethod.NONE
    per_item = kappa.observed_per_item(table.counts, table.m)  # Ao_u, read by four measures
    observed = mean_of(per_item)
    ao = observed.estimate()
    out: dict[str, Estimator] = {
        "observed_agreement": from_totals(observed, NO_PAIRABLE, keep),
        "fleiss_kappa": from_totals(kappa.fleiss_kappa(table, per_item), SINGLE_CATEGORY, keep),
        "krippendorff_alpha": from_totals(alpha.krippendorff_alpha(table), SINGLE_CATEGORY, keep),
    }
    del observed
    pairs, summed, bias, weights = extra
    out.update(coefficients.nominal_estimators(table, per_item, pairs, keep))
    if weights is not None:
        out.update(
            coefficients.ordinal_estimators(
                table,
                summed,
                bias,
                weights,
                keep,
                settings.interval_method == IntervalMethod.BOOTSTRAP,
            )
        )
    chance_per_item = chance.sum(axis=1)
    ae = float(chance_per_item.mean()) if table.n_pairable else float("nan")
    bootstrap = None
    if settings.interval_method == IntervalMethod.BOOTSTRAP and table.n_pairable:
        bootstrap = kappa_s.Bootstrap(table)
    out["kappa_s"] = Estimator(
        float(kappa.kappa_from(np.asarray(ao), np.asarray(ae))),
        table.n_pairable,
        "every rater used one and the same single category: chance agreement is 1",
        lambda: kappa_s.leave_one_out(table, per_item, chance_per_item),
        bootstrap.replicates if bootstrap is not None and bootstrap.feasible else None,
    )
    rated = model.n_items > 0
    reasons: dict[str, str] = {}
    rho_result = None
    if not rated.any():
        reasons["rho"] = NO_REPEATS
    elif table.n_pairable == 0:
        reasons["rho"] = rho.NO_PAIRABLE
    elif rater_fit.reason is not None:
        reasons["rho"] = rater_fit.reason
    else:
        rho_result = rho.rho(
            table,
            np.nan_to_num(rater_fit.reliability),
            rated,
            prevalence,
            settings.rho_mode,
            settings.rho_unrated,
        )
        if rho_result.totals is not None:
            out["rho"] = from_totals(rho_result.totals, "no item to score", keep)
            if keep:
                out["rho"] = resampling.rho_resampling(
                    out["rho"], rho_result, table, model, rater_fit, settings, seed
                )
        else:
            reasons["rho"] = rho_result.reason or "undefined"
    split = rnr.split(table, model.sa, rated, per_item)
    out["expected_agreement"] = from_totals(split.expected_agreement, NO_PAIRABLE, keep)
    if split.repeatability is None or split.rater_effect is None:
        reasons["repeatability"] = reasons["rater_effect"] = NO_REPEATS
    else:
        out["repeatability"] = from_totals(split.repeatability, NO_PAIRABLE, keep)
        out["rater_effect"] = from_totals(split.rater_effect, NO_PAIRABLE, keep)
        if keep:
            slopes = rnr.slopes(table)
            for offset, name in enumerate(("repeatability", "rater_effect")):
                term = split.repeatability if offset == 0 else split.rater_effect
                out[name] = resampling.split_resampling(
                    out[name], term, slopes[name], table, model, seed + 1 + offset
                )
    return out, reasons


def _prevalence(labels: LabelArrays, table: GroupTable) -> np.ndarray:
    """P: category shares of the group's collapsed labels on pairable items
    (docs/measures.md, "Choices made where the sources are silent").

    Without a pairable item (one rater, or raters who never share an item) every look of the
    human raters stands in, so self-kappa stays defined for a lone rater; every look, not only
    the first, or a rater whose two looks at an item differ would read "a single category".
    """
    shares = table.rater_counts.sum(axis=0).astype(float)
    if shares.sum() == 0:
        human = ~labels.rater_is_model[labels.rater]
        shares = np.bincount(labels.category[human], minlength=labels.n_categories).astype(float)
    result: np.ndarray = shares / max(shares.sum(), 1.0)
    return result


def compute_measures(
    labels: LabelArrays,
    settings: ProjectSettings,
    *,
    seed: int | None = None,
    scale: Scale | None = None,
    weights: Weights | None = None,
) -> MeasureSet:
    """Every measure of docs/measures.md ("Project measures") for ``labels``, with intervals
    chosen by ``settings``.

    Parameters
    ----------
    labels : the long label arrays (validated; ``ValueError`` names the field and row).
    settings : collapse policy, rho options, interval method, level and bootstrap resamples.
    seed : bootstrap seed; defaults to ``DEFAULT_SEED``; recorded in the result when used.
    scale, weights : ``ordinal`` adds the weighted coefficients (with ``weights``), each
        rater's grade bias and the pairs' weighted kappa; the declared order of the
        categories is the scale's order. Default: the settings' ``scale`` and ``weights``.
    """
    scale = settings.scale if scale is None else scale
    weights = settings.weights if weights is None else weights
    rater_input: np.ndarray | None = None
    if settings.interval_method == IntervalMethod.BOOTSTRAP:
        # the seed reproduces the intervals whatever the order of the rows (canonical.py)
        labels, rater_input = canonical.canonical(labels, settings.collapse)
    cells = collapse(labels, settings.collapse)
    table = group_table(cells, labels.rater_is_model)
    n_raters = labels.n_raters
    names = labels.rater_names or tuple(str(i) for i in range(n_raters))

    prevalence = _prevalence(labels, table)
    model = self_agreement(
        cells.repeat_counts, cells.rater[cells.repeat_cell], cells.item[cells.repeat_cell], n_raters
    )
    model = raters.humans_only(model, labels.rater_is_model)
    rater_fit = fit(model, prevalence, settings.rater_model)
    if not labels.rater_is_model.any():
        # Without model raters nothing reads the per-cell arrays again (the group table has
        # its own, and the repeats are kept): at 10M labels this frees ~240 MB for the rest.
        empty = np.empty(0, dtype=np.int64)
        cells = dataclasses.replace(cells, item=empty, rater=empty, category=empty)

    bias = table.rater_bias()
    summed, squares = kappa.rater_sums(table, bias)
    chance_by_category = (summed**2 - squares) / np.maximum(table.m * (table.m - 1), 1)[:, None]
    agreement_weights = (
        chance.weight_matrix(labels.n_categories, scale, weights)
        if scale == Scale.ORDINAL
        else None
    )
    pairs = cohen.pairwise_cohen(table, carry=reading.confusion_carry(table))
    used_seed = None
    rng = None
    if settings.interval_method == IntervalMethod.BOOTSTRAP:
        used_seed = DEFAULT_SEED if seed is None else int(seed)
        rng = np.random.default_rng(used_seed)
    estimators, undefined = _group_estimators(
        table,
        cells,
        chance_by_category,
        settings,
        model,
        rater_fit,
        prevalence,
        DEFAULT_SEED if used_seed is None else used_seed,
        (pairs, summed, bias, agreement_weights),
    )
    bounds = project_intervals(estimators, settings, table.n_pairable, labels.n_categories, rng)

    measures: dict[str, Measure] = {}
    by_category: dict[str, dict[str, Measure]] = {}
    for name in CATEGORY_MEASURES:
        by_category[name] = {}
        for c, category in enumerate(labels.category_names):
            key = coefficients.category_key(name, c)
            by_category[name][category] = _measure(
                name, estimators[key], bounds.get(key), table, settings
            )
    for name in PROJECT_MEASURES:
        if name in ORDINAL_MEASURES and agreement_weights is None:
            continue  # the weighted coefficients are reported on ordinal scales only
        if name == "mean_self_agreement":
            measures[name] = raters.mean_self_agreement(model, settings, rng)
        elif name not in estimators:  # rho or the split without what they need
            measures[name] = Measure(None, n=0, reason=undefined.get(name, "undefined"))
        else:
            measures[name] = _measure(name, estimators[name], bounds.get(name), table, settings)
    # the per-item statistics of the project measures are done with: free them before the
    # per-rater intervals (their delete-one values: 80 MB at 10M labels)
    del estimators, bounds

    # S against the group has jackknife intervals whatever the method (as documented)
    wanted = settings.interval_method != IntervalMethod.NONE
    against = group.against_group(
        table, bias, summed, squares, settings.interval_level if wanted else None
    )
    s_vs_group = (
        against.value,
        against.n,
        against.low if wanted else None,
        against.high if wanted else None,
    )
    rater_results = raters.rater_results(
        labels, table, model, rater_fit, s_vs_group, names, settings, rng
    )
    rater_results = raters.with_confusion(
        rater_results, labels, table, settings, rng, scale, pairs.carried
    )
    model_results = reporting.model_results(
        labels, cells, table, chance_by_category, names, settings, rng
    )
    pair_results = reporting.pairwise(table, names, settings, rng, agreement_weights, pairs)
    if rater_input is not None:
        position = {name: int(rater_input[p]) for p, name in enumerate(names)}
        rater_results, model_results, pair_results = _input_order(
            position, rater_results, model_results, pair_results
        )
    return MeasureSet(
        n_labels=labels.n_labels,
        n_items=labels.n_items,
        n_raters=n_raters,
        n_pairable_items=table.n_pairable,
        categories=tuple(labels.category_names),
        measures=measures,
        raters=rater_results,
        models=model_results,
        pairwise_cohen=pair_results,
        interval_method=settings.interval_method,
        interval_level=settings.interval_level,
        seed=used_seed,
        bootstrap_resamples=settings.bootstrap_resamples if rng is not None else None,
        rater_model=settings.rater_model,
        self_agreement_spread=raters.spread(model),
        by_category=by_category,
        scale=scale,
        weights=weights if scale == Scale.ORDINAL else None,
    )


def _measure(
    name: str,
    est: Estimator,
    interval: intervals.Interval | None,
    table: GroupTable,
    settings: ProjectSettings,
) -> Measure:
    reason = NO_PAIRABLE if table.n_pairable == 0 else None
    if reason is None and not np.isfinite(est.value):
        reason = est.undefined
    if est.jackknife_only and settings.interval_method == IntervalMethod.BOOTSTRAP:
        settings = dataclasses.replace(settings, interval_method=IntervalMethod.JACKKNIFE)
    return reporting.make_measure(est.value, est.n, reason, name, interval, settings)


def _input_order(
    position: dict[str, int],
    rater_results: tuple[RaterResult, ...],
    model_results: tuple[ModelResult, ...],
    pair_results: tuple[CohenPair, ...],
) -> tuple[tuple[RaterResult, ...], tuple[ModelResult, ...], tuple[CohenPair, ...]]:
    """Results computed in the canonical numbering, listed in the input's rater order (the
    order every other method lists them in; pair subjects "a|b" keep their order)."""
    pairs = []
    for pair in pair_results:  # bounded by the rater pairs
        if position[pair.rater_a] > position[pair.rater_b]:
            pair = dataclasses.replace(pair, rater_a=pair.rater_b, rater_b=pair.rater_a)
        pairs.append(pair)
    return (
        tuple(sorted(rater_results, key=lambda r: position[r.rater])),
        tuple(sorted(model_results, key=lambda m: position[m.rater])),
        tuple(sorted(pairs, key=lambda p: (position[p.rater_a], position[p.rater_b]))),
    )
