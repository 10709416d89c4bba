"""Turning arrays of estimates into ``Measure`` values: per rater, per model, per pair."""

from __future__ import annotations

import numpy as np

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import cohen, group, intervals
from auditor.stats.bands import band, scale_of
from auditor.stats.results import CohenPair, Measure, ModelResult
from auditor.stats.tables import Cells, GroupTable
from auditor.stats.totals import ItemTotals

NO_REPEATS = "no repeated presentations"


# Within this of zero a value is zero up to rounding: it reads 0 (and takes the band of 0),
# not -3.3e-16 "poor".
ZERO = 1e-12


def snap(value: float) -> float:
    """``value``, or exactly 0.0 when it is within ``ZERO`` of zero."""
    return 0.0 if abs(value) < ZERO else value


def make_measure(
    value: float,
    n: int,
    reason: str | None,
    metric: str,
    interval: intervals.Interval | None,
    settings: ProjectSettings,
) -> Measure:
    """A ``Measure`` of ``metric`` (a catalogue name: its band's scale); NaN or a reason gives
    value None with that reason, never NaN."""
    method = settings.interval_method if interval is not None else IntervalMethod.NONE
    level = settings.interval_level if method != IntervalMethod.NONE else None
    if reason is not None or not np.isfinite(value):
        return Measure(None, n=n, reason=reason or "undefined")
    low, high, ci_reason = interval if interval is not None else (None, None, None)
    value = snap(float(value))
    return Measure(
        value,
        n=n,
        ci_low=None if low is None else snap(float(low)),
        ci_high=None if high is None else snap(float(high)),
        band=band(float(value), scale_of(metric)),
        interval_method=method,
        interval_level=level,
        ci_reason=ci_reason,
    )


def totals_interval(
    totals: ItemTotals, settings: ProjectSettings, rng: np.random.Generator | None
) -> intervals.Interval | None:
    """The interval of an ``ItemTotals`` measure by the project's method (None: no interval)."""
    method, level = settings.interval_method, settings.interval_level
    if method == IntervalMethod.NONE:
        return None
    estimate = totals.estimate()
    if not np.isfinite(estimate):
        return (None, None, None)

    def by_bootstrap(rng: np.random.Generator) -> intervals.Interval:
        replicates = [
            totals.resampled(weights)
            for weights in intervals.resample_weights(
                rng, totals.features.shape[0], settings.bootstrap_resamples
            )
        ]
        return intervals.percentile(np.concatenate(replicates), level, n_items=totals.n_used)

    return intervals.by_method(
        method,
        None,
        lambda: intervals.jackknife(estimate, totals.leave_one_out(), level),
        by_bootstrap,
        rng,
    )


AMAX_EQUALS_AE = "the group does not agree beyond chance on these items (Amax <= Ae)"


def model_results(
    labels: LabelArrays,
    cells: Cells,
    table: GroupTable,
    chance: np.ndarray,
    names: tuple[str, ...],
    settings: ProjectSettings,
    rng: np.random.Generator | None,
) -> tuple[ModelResult, ...]:
    """S and kappa_VA of every model rater against the human group (chance: Ae_u(c), (N, K))."""
    out = []
    for t in np.flatnonzero(labels.rater_is_model):  # bounded by the number of model raters
        position, category = group.candidate_items(cells, table, int(t))
        n = int(position.shape[0])
        if n == 0:
            reason = "the model labeled no item that two human raters labeled"
            out.append(
                ModelResult(names[t], Measure(None, reason=reason), Measure(None, reason=reason))
            )
            continue
        s_totals, va_totals = group.model_scores(table, chance, position, category)
        s_interval = totals_interval(s_totals, settings, rng)
        va_interval = totals_interval(va_totals, settings, rng)
        out.append(
            ModelResult(
                names[t],
                make_measure(
                    s_totals.estimate(),
                    n,
                    None if np.isfinite(s_totals.estimate()) else AMAX_EQUALS_AE,
                    "s",
                    s_interval,
                    settings,
                ),
                make_measure(
                    va_totals.estimate(),
                    n,
                    None
                    if np.isfinite(va_totals.estimate())
                    else "Pm = Pe: the group's best agreement is chance agreement",
                    "kappa_va",
                    va_interval,
                    settings,
                ),
            )
        )
    return tuple(out)


def pairwise(
    table: GroupTable | None,
    names: tuple[str, ...],
    settings: ProjectSettings,
    rng: np.random.Generator | None,
    weights: np.ndarray | None = None,
    result: cohen.PairwiseCohen | None = None,
) -> tuple[CohenPair, ...]:
    """Cohen's kappa of every pair of human raters that shared at least one item, and with
    agreement ``weights`` (an ordinal scale) the weighted kappa ``cohen_w`` beside it, both
    from the same confusion tables and, for the bootstrap, the same resamples. ``result``
    (the pairs' tables, e.g. kept ones) stands in for ``table``."""
    if result is None:
        if table is None:
            raise ValueError("pairwise needs the group table or the pairs' tables")
        result = cohen.pairwise_cohen(table)
    method, level = settings.interval_method, settings.interval_level
    p = result.kappa.shape[0]
    weightings: tuple[np.ndarray | None, ...] = (None,) if weights is None else (None, weights)
    kappas = [result.kappa] + [cohen.kappa_of(result.confusion, w) for w in weightings[1:]]
    bounds = [(np.full(p, np.nan), np.full(p, np.nan)) for _ in weightings]

    def by_bootstrap(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
        found = cohen.bootstrap_intervals(
            result.confusion, level, rng, settings.bootstrap_resamples, weightings
        )
        # zero width from a handful of shared items says nothing, as for the jackknife
        few = result.n_items < intervals.MIN_ITEMS_FOR_ZERO_SPREAD
        out = []
        for low, high in found:
            blind = (high - low <= 1e-12) & few
            out.append((np.where(blind, np.nan, low), np.where(blind, np.nan, high)))
        return out

    if p:
        bounds = intervals.by_method(
            method,
            bounds,
            lambda: [cohen.jackknife_intervals(result.confusion, level, w) for w in weightings],
            by_bootstrap,
            rng,
        )
    out = []
    for i, (a, b, n) in enumerate(
        zip(  # bounded by the number of rater pairs
            result.rater_a.tolist(), result.rater_b.tolist(), result.n_items.tolist(), strict=True
        )
    ):
        measures = [
            _pair_measure(float(kappa[i]), n, float(low[i]), float(high[i]), settings, metric)
            for metric, kappa, (low, high) in zip(PAIR_METRICS, kappas, bounds, strict=False)
        ]
        out.append(
            CohenPair(
                names[a], names[b], measures[0], n, measures[1] if weights is not None else None
            )
        )
    return tuple(out)


# The pair measures in the order of ``kappas``: Cohen's kappa, then the weighted one (ordinal).
PAIR_METRICS = ("cohen_kappa", "cohen_w")


def _pair_measure(
    kappa: float, n: int, low: float, high: float, settings: ProjectSettings, metric: str
) -> Measure:
    reason = None if np.isfinite(kappa) else SINGLE_CATEGORY_PAIR
    interval: intervals.Interval | None = None
    if settings.interval_method != IntervalMethod.NONE:
        interval = (
            (low, high, None)
            if np.isfinite(low)
            else (None, None, "no interval: too few shared items or undefined without one")
        )
    return make_measure(kappa, n, reason, metric, interval, settings)


SINGLE_CATEGORY_PAIR = "both raters used one single category on their shared items"
