"""``compute_measures``: every measure of MEASURES.md for one set of labels, with intervals."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import alpha, group, intervals, kappa, kappa_s, reporting, rho, rnr
from auditor.stats.bands import BandScale
from auditor.stats.results import PROJECT_MEASURES, Measure, MeasureSet
from auditor.stats.selfagreement import SelfAgreement, self_agreement
from auditor.stats.tables import Cells, GroupTable, collapse, group_table
from auditor.stats.totals import ItemTotals

# The seed used when bootstrap intervals are asked for without one; recorded in the result.
DEFAULT_SEED = 20110905

NO_PAIRABLE = "no pairable item (no item labeled by two human raters)"
SINGLE_CATEGORY = "a single category in use: chance agreement is 1"


@dataclass
class _Estimator:
    """A project measure over pairable items and the ways to resample it."""

    value: float
    n: int
    undefined: str
    scale: BandScale | None
    leave_one_out: Callable[[], np.ndarray]
    replicate: Callable[[np.ndarray], np.ndarray] | None


def _from_totals(
    totals: ItemTotals, undefined: str, scale: BandScale | None, keep: bool = True
) -> _Estimator:
    """An estimator; without intervals (``keep`` False) the per-item statistics are dropped."""
    if not keep:
        return _Estimator(totals.estimate(), totals.n_used, undefined, scale, _none, None)
    return _Estimator(
        totals.estimate(), totals.n_used, undefined, scale, totals.leave_one_out, totals.resampled
    )


def _none() -> np.ndarray:
    raise ValueError("intervals were not requested")


def _group_estimators(
    table: GroupTable,
    cells: Cells,
    chance: np.ndarray,
    settings: ProjectSettings,
    model: SelfAgreement,
    prevalence: np.ndarray,
) -> tuple[dict[str, _Estimator], rho.Rho]:
    """The project measures defined over pairable items (all but mean self-agreement)."""
    lk, kr = BandScale.LANDIS_KOCH, BandScale.KRIPPENDORFF
    keep = settings.interval_method != IntervalMethod.NONE
    observed = kappa.observed_agreement(table)
    ao = observed.estimate()
    out: dict[str, _Estimator] = {
        "observed_agreement": _from_totals(observed, NO_PAIRABLE, None, keep),
        "fleiss_kappa": _from_totals(kappa.fleiss_kappa(table), SINGLE_CATEGORY, lk, keep),
        "krippendorff_alpha": _from_totals(
            alpha.krippendorff_alpha(table), SINGLE_CATEGORY, kr, keep
        ),
    }
    del observed
    ae = float(chance.sum(axis=1).mean()) if table.n_pairable else float("nan")
    bootstrap = None
    if settings.interval_method == IntervalMethod.BOOTSTRAP and table.n_pairable:
        bootstrap = kappa_s.Bootstrap(table)
    out["kappa_s"] = _Estimator(
        float(kappa.kappa_from(np.asarray(ao), np.asarray(ae))),
        table.n_pairable,
        "every rater used one and the same single category: chance agreement is 1",
        lk,
        lambda: kappa_s.leave_one_out(table),
        bootstrap.replicates if bootstrap is not None and bootstrap.feasible else None,
    )
    rated = model.n_items > 0
    rho_result = rho.rho(
        table,
        np.nan_to_num(model.x),
        np.nan_to_num(model.y),
        rated,
        prevalence,
        settings.rho_mode,
        settings.rho_unrated,
    )
    if rho_result.totals is not None:
        out["rho"] = _from_totals(rho_result.totals, "no item to score", kr, keep)
    split = rnr.split(table, cells)
    out["expected_agreement"] = _from_totals(split.expected_agreement, NO_PAIRABLE, lk, keep)
    out["repeatability"] = _from_totals(split.repeatability, NO_PAIRABLE, None, keep)
    out["rater_effect"] = _from_totals(split.rater_effect, NO_PAIRABLE, None, keep)
    return out, rho_result


def _intervals(
    estimators: dict[str, _Estimator],
    settings: ProjectSettings,
    n_items: int,
    rng: np.random.Generator | None,
) -> dict[str, intervals.Interval]:
    """Intervals of the project measures; bootstrap resamples are shared by all of them."""
    method, level = settings.interval_method, settings.interval_level
    defined = {k: e for k, e in estimators.items() if np.isfinite(e.value)}
    if method == IntervalMethod.NONE or not defined:
        return {}
    if method == IntervalMethod.JACKKNIFE:
        return {
            k: intervals.jackknife(e.value, e.leave_one_out(), level) for k, e in defined.items()
        }
    if rng is None:
        raise ValueError("a bootstrap needs a random generator")
    resampled = {k: e for k, e in defined.items() if e.replicate is not None}
    replicates: dict[str, list[np.ndarray]] = {k: [] for k in resampled}
    for weights in intervals.resample_weights(rng, n_items, settings.bootstrap_resamples):
        for name, est in resampled.items():
            replicates[name].append(est.replicate(weights))  # type: ignore[misc]
    result: dict[str, intervals.Interval] = {
        k: (None, None, "too many rater-set patterns to bootstrap; use the jackknife")
        for k in defined
    }
    for name, values in replicates.items():
        result[name] = intervals.percentile(np.concatenate(values), level)
    return result


def compute_measures(
    labels: LabelArrays, settings: ProjectSettings, *, seed: int | None = None
) -> MeasureSet:
    """Every measure of MEASURES.md for ``labels``, with intervals chosen by ``settings``.

    Parameters
    ----------
    labels : the long label arrays (validated; ``ValueError`` names the field and row).
    settings : collapse policy, rho options, interval method, level and bootstrap resamples.
    seed : bootstrap seed; defaults to ``DEFAULT_SEED``; recorded in the result when used.
    """
    cells = collapse(labels, settings.collapse)
    table = group_table(cells, labels.rater_is_model)
    n_raters, k = labels.n_raters, labels.n_categories
    names = labels.rater_names or tuple(str(i) for i in range(n_raters))

    human_categories = (
        cells.category[~labels.rater_is_model[cells.rater]]
        if labels.rater_is_model.any()
        else cells.category
    )
    shares = np.bincount(human_categories, minlength=k).astype(float)
    prevalence = shares / max(shares.sum(), 1.0)
    model = self_agreement(
        cells.repeat_counts,
        cells.rater[cells.repeat_cell],
        cells.item[cells.repeat_cell],
        prevalence,
        n_raters,
    )
    model = reporting.humans_only(model, labels.rater_is_model)
    del human_categories
    if not labels.rater_is_model.any():
        # Without model raters nothing reads the per-cell arrays again (the group table has
        # its own, and the repeats are kept): at 10M labels this frees ~240 MB for the rest.
        empty = np.empty(0, dtype=np.int64)
        cells = dataclasses.replace(cells, item=empty, rater=empty, category=empty)

    bias = table.rater_bias()
    summed, squares = kappa.rater_sums(table, bias)
    chance = (summed**2 - squares) / np.maximum(table.m * (table.m - 1), 1)[:, None]
    estimators, rho_result = _group_estimators(table, cells, chance, settings, model, prevalence)

    used_seed = None
    rng = None
    if settings.interval_method == IntervalMethod.BOOTSTRAP:
        used_seed = DEFAULT_SEED if seed is None else int(seed)
        rng = np.random.default_rng(used_seed)
    bounds = _intervals(estimators, settings, table.n_pairable, rng)

    measures: dict[str, Measure] = {}
    for name in PROJECT_MEASURES:
        if name == "mean_self_agreement":
            measures[name] = reporting.mean_self_agreement(model, settings, rng)
        elif name not in estimators:  # rho without any repeated presentation
            measures[name] = Measure(None, n=0, reason=rho_result.reason or "undefined")
        else:
            est = estimators[name]
            reason = NO_PAIRABLE if table.n_pairable == 0 else None
            if reason is None and not np.isfinite(est.value):
                reason = est.undefined
            measures[name] = reporting.make_measure(
                est.value, est.n, reason, est.scale, bounds.get(name), settings
            )
    # the per-item statistics of the project measures are done with: free them before the
    # per-rater intervals, which have the largest temporaries (~300 MB at 10M labels)
    del estimators, bounds

    s_value, s_n = group.leave_one_out_s(table, bias, summed, squares)
    s_low = s_high = None
    if settings.interval_method != IntervalMethod.NONE:
        s_low, s_high = group.leave_one_out_s_intervals(
            table, bias, summed, squares, settings.interval_level
        )
    s_vs_group = (s_value, s_n, s_low, s_high)
    return MeasureSet(
        n_labels=labels.n_labels,
        n_items=labels.n_items,
        n_raters=n_raters,
        n_pairable_items=table.n_pairable,
        categories=tuple(labels.category_names),
        measures=measures,
        raters=reporting.rater_results(labels, table, model, s_vs_group, names, settings, rng),
        models=reporting.model_results(labels, cells, table, chance, names, settings, rng),
        pairwise_cohen=reporting.pairwise(table, names, settings, rng),
        interval_method=settings.interval_method,
        interval_level=settings.interval_level,
        seed=used_seed,
        bootstrap_resamples=settings.bootstrap_resamples if rng is not None else None,
        rho_exact_fallbacks=rho_result.fallbacks,
        self_agreement_spread=reporting.spread(model),
    )
