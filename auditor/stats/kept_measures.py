"""A ``MeasureSet`` from the kept sums (issue 22): the shape ``compute_measures`` returns, with
every part the kept sums cover, and the rest undefined ("not kept") and named in ``missing``.

The recompute can use the set as its snapshot when ``missing`` is empty and take the full path
(every label) otherwise. ``missing`` speaks this vocabulary: "measures.<name>",
"by_category.<name>", "raters.<field>" (every rater), "models", "pairwise_cohen".

Intervals are the delete-a-group jackknife over the kept item groups (``group_jackknife``),
reported under the jackknife method: with ``interval_method`` bootstrap every part with an
interval is missing (the bootstrap resamples items, the kept sums cannot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from auditor.domain import IntervalMethod, ProjectSettings, RaterModel, Scale
from auditor.stats import chance, cohen, intervals, kept_pairs, reading, reporting, rho
from auditor.stats.bands import BandScale
from auditor.stats.coefficients import NO_PAIRABLE, NO_SHARED, SINGLE_CATEGORY, category_key
from auditor.stats.cohen import PairwiseCohen
from auditor.stats.group_jackknife import grouped_jackknife
from auditor.stats.kept import KeptStats
from auditor.stats.kept_estimates import (
    KeptAgainstGroup,
    KeptEstimate,
    KeptGradeBias,
    RhoOptions,
    against_group_estimates,
    estimates,
    grade_bias_estimates,
    model_estimates,
    rater_estimates,
)
from auditor.stats.raters import NO_PAIRABLE_ITEM
from auditor.stats.reading import NOT_USED, row_normalised
from auditor.stats.reporting import AMAX_EQUALS_AE, NO_REPEATS, make_measure
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
from auditor.stats.selfagreement import SINGLE_CATEGORY as RATER_SINGLE_CATEGORY
from auditor.stats.selfagreement import corrected_for_chance, kappa_to_reliability

NOT_KEPT = "not kept"
NO_S_INTERVAL = "no interval: too few items or undefined without one"
FEW_REPEATS = "the interval needs at least two repeated items"

_LK, _KR = BandScale.LANDIS_KOCH, BandScale.KRIPPENDORFF
# Per kept project measure: its band scale and the reason compute_measures gives when it is
# undefined with pairable items (measures.py, coefficients.py).
_PROJECT: dict[str, tuple[BandScale | None, str]] = {
    "observed_agreement": (None, NO_PAIRABLE),
    "kappa_s": (_LK, "every rater used one and the same single category: chance agreement is 1"),
    "fleiss_kappa": (_LK, SINGLE_CATEGORY),
    "krippendorff_alpha": (_KR, SINGLE_CATEGORY),
    "rho": (_KR, "no item to score"),
    "expected_agreement": (_LK, NO_PAIRABLE),
    "repeatability": (None, NO_PAIRABLE),
    "rater_effect": (None, NO_PAIRABLE),
    "ac1": (_LK, SINGLE_CATEGORY),
    "bp": (_LK, NO_PAIRABLE),
    "prevalence_index": (None, NO_PAIRABLE),
}
_ORDINAL: dict[str, tuple[BandScale | None, str]] = {
    "kappa_s_w": (_LK, "every rater used one and the same single category: chance agreement is 1"),
    "fleiss_kappa_w": (_LK, SINGLE_CATEGORY),
    "ac2": (_LK, SINGLE_CATEGORY),
    "bp_w": (_LK, NO_PAIRABLE),
    "alpha_ordinal": (_KR, SINGLE_CATEGORY),
    "alpha_interval": (_KR, SINGLE_CATEGORY),
}
_PROJECT.update(_ORDINAL)
_CATEGORY: dict[str, str] = {"category_share": NO_PAIRABLE, "specific_agreement": NOT_USED}
# The RaterResult fields of the rater model (their intervals are images of SA_p's).
_RATER_MODEL = ("self_agreement", "self_kappa", "reliability", "random_choice")


@dataclass(frozen=True)
class KeptMeasureSet:
    """The snapshot from the kept sums and the parts it does not cover (see module doc)."""

    measures: MeasureSet
    missing: tuple[str, ...]


def _not_kept() -> Measure:
    return Measure(None, n=0, reason=NOT_KEPT)


def _interval(e: KeptEstimate) -> intervals.Interval:
    return (e.low, e.high, e.reason if e.low is None else None)


def _project(
    name: str,
    found: dict[str, KeptEstimate],
    state: KeptStats,
    jackknife: bool,
    settings: ProjectSettings,
) -> Measure:
    """One kept project measure as ``compute_measures`` reports it."""
    total = state.total()
    n_pairable = int(total.n[0])
    rated = bool((total.sa_items[0] > 0).any())
    if name == "mean_self_agreement":
        if not rated:
            return Measure(None, n=0, reason=NO_REPEATS)
        e = found[name]
        value = math.nan if e.value is None else e.value
        interval = _interval(e) if jackknife else None
        return make_measure(value, int(total.sa_items[0].sum()), None, name, interval, settings)
    _, undefined = _PROJECT[name]
    if name in ("repeatability", "rater_effect") and not rated:
        return Measure(None, n=0, reason=NO_REPEATS)
    if name == "rho":
        reason = _rho_reason(total, rated)
        if reason is not None:
            return Measure(None, n=0, reason=reason)
    e = found[name]
    reason = NO_PAIRABLE if n_pairable == 0 else (undefined if e.value is None else None)
    value = math.nan if e.value is None else e.value
    interval = _interval(e) if jackknife and e.value is not None else None
    return make_measure(value, n_pairable, reason, name, interval, settings)


def _rho_reason(total: KeptStats, rated: bool) -> str | None:
    """Why rho is undefined before it is computed, in compute_measures' order."""
    if not rated:
        return NO_REPEATS
    if total.n[0] == 0:
        return rho.NO_PAIRABLE
    prevalence = total.counts[0] / total.counts[0].sum()
    if 1.0 - float((prevalence**2).sum()) <= 1e-12:
        return RATER_SINGLE_CATEGORY
    return None


def _category(
    name: str,
    c: int,
    found: dict[str, KeptEstimate],
    n_pairable: int,
    jackknife: bool,
    settings: ProjectSettings,
) -> Measure:
    e = found[category_key(name, c)]
    reason = NO_PAIRABLE if n_pairable == 0 else (_CATEGORY[name] if e.value is None else None)
    value = math.nan if e.value is None else e.value
    interval = _interval(e) if jackknife and e.value is not None else None
    return make_measure(value, n_pairable, reason, name, interval, settings)


def _rater_sa_bounds(
    state: KeptStats, level: float
) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """Each rater's SA_p interval by the delete-a-group jackknife over the groups holding her
    repeated items (R,) each, NaN without one, and why not."""
    total_sum, total_items = state.sa_sum.sum(axis=0), state.sa_items.sum(axis=0)
    r = state.n_raters
    low, high = np.full(r, np.nan), np.full(r, np.nan)
    reasons: list[str | None] = [None] * r
    for p in range(r):  # bounded by the raters
        if total_items[p] == 0:
            continue
        held = state.sa_items[:, p] > 0
        left = total_items[p] - state.sa_items[held, p]
        with np.errstate(invalid="ignore", divide="ignore"):
            replicates = (total_sum[p] - state.sa_sum[held, p]) / left
        value = float(total_sum[p] / total_items[p])
        lo, hi, why = grouped_jackknife(value, replicates, level, 0.0, 1.0)
        if lo is None or hi is None:
            reasons[p] = FEW_REPEATS if total_items[p] < 2 else (why or intervals.TOO_FEW_ITEMS)
        else:
            low[p], high[p] = lo, hi
    return low, high, reasons


def method_wanted(settings: ProjectSettings) -> bool:
    return settings.interval_method != IntervalMethod.NONE


def _s_vs_group(
    against: KeptAgainstGroup, p: int, undefined: str, settings: ProjectSettings
) -> Measure:
    """S against the group as ``raters.rater_results`` reports it: a jackknife interval
    whatever the project's method (here over the item groups)."""
    n = int(against.n[p])
    value = float(against.value[p])
    reason = None if n else "no item shared with two other raters"
    reason = reason or (None if np.isfinite(value) else undefined)
    if not method_wanted(settings):
        return make_measure(value, n, reason, "s_vs_group", None, settings)
    low, high = against.low[p], against.high[p]
    interval: intervals.Interval = (
        (float(low), float(high), None)
        if np.isfinite(low)
        else (
            None,
            None,
            against.reason[p] or "no interval: too few items or undefined without one",
        )
    )
    jackknife = ProjectSettings(
        interval_method=IntervalMethod.JACKKNIFE, interval_level=settings.interval_level
    )
    return make_measure(value, n, reason, "s_vs_group", interval, jackknife)


def _grade_bias(grade: KeptGradeBias, p: int, settings: ProjectSettings) -> Measure:
    """Her grade bias as ``raters.with_confusion`` reports it."""
    n = int(grade.n[p])
    interval: intervals.Interval | None = None
    if method_wanted(settings):
        low, high = grade.low[p], grade.high[p]
        interval = (
            (float(low), float(high), None)
            if np.isfinite(low)
            else (None, None, "no interval: too few items")
        )
    reason = None if n else NO_PAIRABLE_ITEM
    return make_measure(float(grade.value[p]), n, reason, "grade_bias", interval, settings)


def _raters(
    state: KeptStats,
    rater_names: tuple[str, ...],
    is_model: np.ndarray,
    settings: ProjectSettings,
    jackknife: bool,
    ordinal: bool,
    missing: list[str],
) -> tuple[RaterResult, ...]:
    found = rater_estimates(state)
    total = state.total()
    counts = total.rater_counts[0]
    shares = total.counts[0] if total.counts[0].sum() else total.looks_by_category[0]
    prevalence = shares / max(float(shares.sum()), 1.0)
    chance = float((prevalence**2).sum())
    single = 1.0 - chance <= 1e-12
    covered = settings.interval_method != IntervalMethod.BOOTSTRAP
    # max_entropy's x_p is a mean over repeated cells of a function of their looks
    model_covered = covered and settings.rater_model == RaterModel.MOMENTS
    low = high = np.full(state.n_raters, np.nan)
    why: list[str | None] = [None] * state.n_raters
    if jackknife and covered:
        low, high, why = _rater_sa_bounds(state, settings.interval_level)
    bounds = {"self_agreement": (low, high)}
    if not single:
        k_low, k_high = corrected_for_chance(low, chance), corrected_for_chance(high, chance)
        y_low, y_high = kappa_to_reliability(k_low), kappa_to_reliability(k_high)
        bounds.update(
            self_kappa=(k_low, k_high),
            reliability=(y_low, y_high),
            random_choice=(1.0 - y_high, 1.0 - y_low),
        )
    values = {
        "self_agreement": found.self_agreement,
        "self_kappa": found.self_kappa,
        "reliability": found.reliability,
        "random_choice": found.random_choice,
    }
    against = against_group_estimates(
        state, settings.interval_level if method_wanted(settings) else None
    )
    undefined_s = RATER_SINGLE_CATEGORY if single else AMAX_EQUALS_AE
    shares_by_row = row_normalised(total.confusion[0])
    grade = grade_bias_estimates(
        state, settings.interval_level if method_wanted(settings) else None
    )
    uncovered: list[str] = []
    if not covered:
        uncovered[:0] = list(_RATER_MODEL)
    elif not model_covered:
        uncovered[:0] = ["reliability", "random_choice"]
    out = []
    for p in np.flatnonzero(~is_model):  # bounded by the raters
        k = int(found.n_repeated_items[p])
        per: dict[str, Measure] = {}
        for field in _RATER_MODEL:
            if field in uncovered:
                per[field] = _not_kept()
                continue
            reason = None if k else NO_REPEATS
            if reason is None and field != "self_agreement" and single:
                reason = RATER_SINGLE_CATEGORY
            interval: intervals.Interval | None = None
            if jackknife and field in bounds:
                lo, hi = bounds[field][0][p], bounds[field][1][p]
                interval = (
                    (float(lo), float(hi), None)
                    if np.isfinite(lo) and np.isfinite(hi)
                    else (None, None, why[p] or (FEW_REPEATS if k < 2 else intervals.TOO_FEW_ITEMS))
                )
            per[field] = make_measure(float(values[field][p]), k, reason, field, interval, settings)
        out.append(
            RaterResult(
                rater=rater_names[p],
                self_agreement=per["self_agreement"],
                self_kappa=per["self_kappa"],
                reliability=per["reliability"],
                random_choice=per["random_choice"],
                s_vs_group=_s_vs_group(against, int(p), undefined_s, settings),
                n_repeated_items=k,
                n_presentations=int(found.n_presentations[p]),
                grade_bias=_grade_bias(grade, int(p), settings) if ordinal else None,
                confusion=tuple(
                    tuple(None if not np.isfinite(v) else float(v) for v in row)
                    for row in shares_by_row[p]
                ),
                confusion_n=tuple(int(c) for c in counts[p]),
            )
        )
    if out:
        missing.extend(f"raters.{field}" for field in uncovered)
    return tuple(out)


NO_MODEL_ITEM = "the model labeled no item that two human raters labeled"
PM_EQUALS_PE = "Pm = Pe: the group's best agreement is chance agreement"


def _models(
    state: KeptStats, rater_names: tuple[str, ...], is_model: np.ndarray, settings: ProjectSettings
) -> tuple[ModelResult, ...]:
    """S and kappa_VA of every model slot as ``reporting.model_results`` reports them."""
    level = settings.interval_level if method_wanted(settings) else None
    found = model_estimates(state, level)
    out = []
    for t in np.flatnonzero(is_model):  # bounded by the raters
        n = int(found.n[t])
        if n == 0:
            missing_item = Measure(None, reason=NO_MODEL_ITEM)
            out.append(ModelResult(rater_names[t], missing_item, missing_item))
            continue
        measures = []
        for metric, value, low, high, undefined in (
            ("s", found.s, found.s_low, found.s_high, AMAX_EQUALS_AE),
            ("kappa_va", found.va, found.va_low, found.va_high, PM_EQUALS_PE),
        ):
            interval: intervals.Interval | None = None
            if level is not None:
                interval = (
                    (float(low[t]), float(high[t]), None)
                    if np.isfinite(low[t])
                    else (None, None, None)
                )
            reason = None if np.isfinite(value[t]) else undefined
            measures.append(make_measure(float(value[t]), n, reason, metric, interval, settings))
        out.append(ModelResult(rater_names[t], measures[0], measures[1]))
    return tuple(out)


def _bias_index(state: KeptStats, settings: ProjectSettings, jackknife: bool) -> Measure:
    """The bias index from the kept pair tables (``reading.bias_index``), with the
    delete-a-group jackknife over the groups holding shared items (the pair differences are
    kept per group)."""
    total = state.total()
    shared = int(np.rint(total.pair_confusion.sum()))
    value = reading.bias_index(total.pair_confusion[0])
    reason = NO_PAIRABLE if total.n[0] == 0 else (None if np.isfinite(value) else NO_SHARED)
    interval: intervals.Interval | None = None
    if jackknife and reason is None:
        held = state.pair_difference[..., -1].sum(axis=1) > 0
        replicates = kept_pairs.bias_index_states(state.without_each_group().pair_difference)
        interval = grouped_jackknife(value, replicates[held], settings.interval_level, 0.0, 1.0)
    return make_measure(value, shared, reason, "bias_index", interval, settings)


def _pairwise(
    total: KeptStats, rater_names: tuple[str, ...], settings: ProjectSettings, ordinal: bool
) -> tuple[CohenPair, ...]:
    """Every pair's Cohen kappa (and cohen_w on an ordinal scale) from its kept confusion
    table, with the full path's delete-one-item jackknife (a function of the table alone)."""
    a, b = kept_pairs.decode(total.pair_key)
    confusion = total.pair_confusion[0]
    result = PairwiseCohen(
        rater_a=a,
        rater_b=b,
        n_items=np.rint(confusion.sum(axis=(1, 2))).astype(np.int64),
        kappa=cohen.kappa_of(confusion),
        confusion=confusion,
    )
    weights = (
        chance.weight_matrix(total.n_categories, settings.scale, settings.weights)
        if ordinal
        else None
    )
    return reporting.pairwise(None, rater_names, settings, None, weights, result)


def kept_measure_set(
    state: KeptStats,
    *,
    rater_names: tuple[str, ...],
    is_model: np.ndarray,
    categories: tuple[str, ...],
    settings: ProjectSettings,
    n_labels: int,
    n_items: int,
) -> KeptMeasureSet:
    """The ``MeasureSet`` of ``compute_measures`` from the kept sums (see the module doc).

    rater_names, is_model : per kept rater slot (``Layout.raters``), in slot order; raters,
    models and pairs are listed in slot order (compute_measures lists them in the labels'
    rater order, which the service builds in the same slot order).
    """
    is_model = np.asarray(is_model, dtype=bool)
    if len(rater_names) != state.n_raters or is_model.shape[0] != state.n_raters:
        raise ValueError("rater_names and is_model must give one entry per kept rater slot")
    if len(categories) != state.n_categories:
        raise ValueError("categories must give one name per kept category")
    ordinal = settings.scale == Scale.ORDINAL
    method = settings.interval_method
    jackknife = method == IntervalMethod.JACKKNIFE
    bootstrap = method == IntervalMethod.BOOTSTRAP
    options = RhoOptions(settings.rho_mode, settings.rho_unrated, settings.rater_model)
    weights = (
        chance.weight_matrix(state.n_categories, settings.scale, settings.weights)
        if ordinal
        else None
    )
    found = estimates(state, settings.interval_level, options, weights)
    total = state.total()
    n_pairable = int(total.n[0])
    missing: list[str] = []

    measures: dict[str, Measure] = {}
    for name in PROJECT_MEASURES:
        if name in ORDINAL_MEASURES and not ordinal:
            continue
        kept = name in _PROJECT or name in ("mean_self_agreement", "bias_index")
        if name == "rho" and not options.covered:
            kept = False

        if not kept or bootstrap:
            measures[name] = _not_kept()
            missing.append(f"measures.{name}")
            continue
        if name == "bias_index":
            measures[name] = _bias_index(state, settings, jackknife)
        else:
            measures[name] = _project(name, found, state, jackknife, settings)

    by_category: dict[str, dict[str, Measure]] = {}
    for name in CATEGORY_MEASURES:
        if name not in _CATEGORY or bootstrap:
            by_category[name] = {category: _not_kept() for category in categories}
            missing.append(f"by_category.{name}")
            continue
        by_category[name] = {
            category: _category(name, c, found, n_pairable, jackknife, settings)
            for c, category in enumerate(categories)
        }

    rater_results = _raters(state, rater_names, is_model, settings, jackknife, ordinal, missing)
    models: tuple[ModelResult, ...] = ()
    if bootstrap and is_model.any():
        missing.append("models")  # its resamples are drawn with everything else's
    elif is_model.any():
        models = _models(state, rater_names, is_model, settings)
    pairs: tuple[CohenPair, ...] = ()
    if bootstrap and int((~is_model).sum()) >= 2:
        missing.append("pairwise_cohen")  # its resamples are drawn with everything else's
    else:
        pairs = _pairwise(total, rater_names, settings, ordinal)

    rated = total.sa_items[0] > 0
    sa = total.sa_sum[0][rated] / total.sa_items[0][rated]
    notes = (
        (f"intervals: delete-a-group jackknife over {state.n_groups} item groups",)
        if jackknife
        else ()
    )
    result = MeasureSet(
        n_labels=n_labels,
        n_items=n_items,
        n_raters=state.n_raters,
        n_pairable_items=n_pairable,
        categories=tuple(categories),
        measures=measures,
        raters=rater_results,
        models=models,
        pairwise_cohen=pairs,
        interval_method=method,
        interval_level=settings.interval_level,
        seed=None,
        bootstrap_resamples=None,
        rater_model=settings.rater_model,
        self_agreement_spread=float(sa.std()) if sa.size else None,
        notes=notes,
        by_category=by_category,
        scale=settings.scale,
        weights=settings.weights if ordinal else None,
    )
    return KeptMeasureSet(result, tuple(missing))
