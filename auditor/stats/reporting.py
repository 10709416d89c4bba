"""Turning arrays of estimates into ``Measure`` values: per rater, per model, per pair."""

from __future__ import annotations

import numpy as np

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import cohen, group, intervals
from auditor.stats.bands import BandScale, band
from auditor.stats.results import CohenPair, Measure, ModelResult, RaterResult
from auditor.stats.selfagreement import SelfAgreement
from auditor.stats.tables import Cells, GroupTable
from auditor.stats.totals import ItemTotals

NO_REPEATS = "no repeated presentations"


def make_measure(
    value: float,
    n: int,
    reason: str | None,
    scale: BandScale | None,
    interval: intervals.Interval | None,
    settings: ProjectSettings,
) -> Measure:
    """A ``Measure``; NaN or a reason gives value None with that reason, never NaN."""
    method = settings.interval_method if interval is not None else IntervalMethod.NONE
    level = settings.interval_level if method != IntervalMethod.NONE else None
    if reason is not None or not np.isfinite(value):
        return Measure(None, n=n, reason=reason or "undefined")
    low, high, ci_reason = interval if interval is not None else (None, None, None)
    return Measure(
        float(value),
        n=n,
        ci_low=None if low is None else float(low),
        ci_high=None if high is None else float(high),
        band=band(float(value), scale),
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
    if method == IntervalMethod.JACKKNIFE:
        return intervals.jackknife(estimate, totals.leave_one_out(), level)
    if rng is None:
        raise ValueError("a bootstrap needs a random generator")
    replicates = [
        totals.resampled(weights)
        for weights in intervals.resample_weights(
            rng, totals.features.shape[0], settings.bootstrap_resamples
        )
    ]
    return intervals.percentile(np.concatenate(replicates), level)


def humans_only(model: SelfAgreement, rater_is_model: np.ndarray) -> SelfAgreement:
    """Drop the repeated cells of model raters: self-agreement is a human measure here."""
    keep = ~rater_is_model[model.cell_rater]
    if keep.all():
        return model
    n_items = np.where(rater_is_model, 0, model.n_items)
    nan_models = np.where(rater_is_model, np.nan, 1.0)
    return SelfAgreement(
        sa=model.sa * nan_models,
        n_items=n_items,
        n_presentations=np.where(rater_is_model, 0, model.n_presentations),
        x=model.x * nan_models,
        y=model.y * nan_models[:, None],
        cell_sa=model.cell_sa[keep],
        cell_x=model.cell_x[keep],
        cell_rater=model.cell_rater[keep],
        cell_item=model.cell_item[keep],
    )


def spread(model: SelfAgreement) -> float | None:
    """Population standard deviation of SA_p over raters with repeats."""
    values = model.sa[model.n_items > 0]
    return float(values.std()) if values.size else None


def mean_self_agreement(
    model: SelfAgreement, settings: ProjectSettings, rng: np.random.Generator | None
) -> Measure:
    """Mean of SA_p over human raters with repeats; n = repeated (rater, item) cells.

    The interval resamples the items that carry repeats: deleting (or redrawing) an item
    changes the SA_p of every rater who repeated it, and drops a rater whose only repeat it was.
    """
    rated = model.n_items > 0
    n_cells = int(model.cell_sa.shape[0])
    if not rated.any():
        return Measure(None, n=0, reason=NO_REPEATS)
    value = float(model.sa[rated].mean())
    items, item_index = np.unique(model.cell_item, return_inverse=True)
    k = model.n_items
    totals = np.nan_to_num(model.sa) * k
    sa = np.nan_to_num(model.sa)
    method, level = settings.interval_method, settings.interval_level
    interval: intervals.Interval | None = None
    if method == IntervalMethod.JACKKNIFE:
        k_cell = k[model.cell_rater]
        dropped = k_cell == 1
        left = np.divide(
            totals[model.cell_rater] - model.cell_sa,
            k_cell - 1,
            out=np.zeros(n_cells),
            where=~dropped,
        )
        change = left - sa[model.cell_rater]
        change_sum = np.bincount(item_index, weights=change, minlength=items.shape[0])
        drops = np.bincount(item_index, weights=dropped, minlength=items.shape[0])
        remaining = rated.sum() - drops
        loo = np.divide(
            sa[rated].sum() + change_sum,
            remaining,
            out=np.full(items.shape[0], np.nan),
            where=remaining > 0,
        )
        interval = intervals.jackknife(value, loo, level)
    elif method == IntervalMethod.BOOTSTRAP:
        if rng is None:
            raise ValueError("a bootstrap needs a random generator")
        order = np.argsort(model.cell_rater, kind="stable")
        starts = np.flatnonzero(np.diff(model.cell_rater[order], prepend=-1))
        replicates = []
        for weights in intervals.resample_weights(
            rng, items.shape[0], settings.bootstrap_resamples
        ):
            cell_weight = weights[:, item_index[order]]
            sums = np.add.reduceat(cell_weight * model.cell_sa[order], starts, axis=1)
            counts = np.add.reduceat(cell_weight, starts, axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                replicates.append(np.nanmean(sums / np.where(counts > 0, counts, np.nan), axis=1))
        interval = intervals.percentile(np.concatenate(replicates), level)
    return make_measure(value, n_cells, None, None, interval, settings)


def rater_results(
    labels: LabelArrays,
    table: GroupTable,
    model: SelfAgreement,
    s_vs_group: tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None],
    names: tuple[str, ...],
    settings: ProjectSettings,
    rng: np.random.Generator | None,
) -> tuple[RaterResult, ...]:
    """One ``RaterResult`` per human rater, in rater-index order."""
    n_raters = labels.n_raters
    method = settings.interval_method
    bounds: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for key, values in (("sa", model.cell_sa), ("x", model.cell_x)):
        if method == IntervalMethod.NONE:
            continue
        bounds[key] = intervals.grouped_means(
            values,
            model.cell_rater,
            n_raters,
            method.value,
            settings.interval_level,
            rng,
            settings.bootstrap_resamples,
        )
    s_value, s_n, s_low, s_high = s_vs_group
    # per-rater S has a jackknife interval whatever the project method (see docs/measures.md)
    s_settings = ProjectSettings(
        interval_method=IntervalMethod.JACKKNIFE, interval_level=settings.interval_level
    )
    out = []
    for p in np.flatnonzero(~labels.rater_is_model):  # bounded by the number of raters
        k = int(model.n_items[p])
        per: dict[str, Measure] = {}
        for key, value in (("sa", model.sa[p]), ("x", model.x[p])):
            interval = None
            if key in bounds:
                low, high = bounds[key][0][p], bounds[key][1][p]
                interval = (
                    (float(low), float(high), None)
                    if np.isfinite(low)
                    else (None, None, "the interval needs at least two repeated items")
                )
            per[key] = make_measure(
                float(value), k, None if k else NO_REPEATS, None, interval, settings
            )
        s_reason = None if s_n[p] else "no item shared with two other raters"
        s_interval: intervals.Interval | None = None
        if s_low is not None and s_high is not None:
            s_interval = (
                (float(s_low[p]), float(s_high[p]), None)
                if np.isfinite(s_low[p])
                else (None, None, "no interval: too few items or undefined without one")
            )
        out.append(
            RaterResult(
                rater=names[p],
                self_agreement=per["sa"],
                random_choice=per["x"],
                s_vs_group=make_measure(
                    float(s_value[p]),
                    int(s_n[p]),
                    s_reason or (None if np.isfinite(s_value[p]) else AMAX_EQUALS_AE),
                    BandScale.LANDIS_KOCH,
                    s_interval,
                    s_settings if s_interval is not None else settings,
                ),
                n_repeated_items=k,
                n_presentations=int(model.n_presentations[p]),
                x=float(model.x[p]) if k else None,
                y=tuple(float(v) for v in model.y[p]) if k else None,
            )
        )
    return tuple(out)


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
                    BandScale.LANDIS_KOCH,
                    s_interval,
                    settings,
                ),
                make_measure(
                    va_totals.estimate(),
                    n,
                    None
                    if np.isfinite(va_totals.estimate())
                    else "Pm = Pe: the group's best agreement is chance agreement",
                    BandScale.LANDIS_KOCH,
                    va_interval,
                    settings,
                ),
            )
        )
    return tuple(out)


def pairwise(
    table: GroupTable,
    names: tuple[str, ...],
    settings: ProjectSettings,
    rng: np.random.Generator | None,
) -> tuple[CohenPair, ...]:
    """Cohen's kappa of every pair of human raters that shared at least one item."""
    result = cohen.pairwise_cohen(table)
    method, level = settings.interval_method, settings.interval_level
    p = result.kappa.shape[0]
    low, high = np.full(p, np.nan), np.full(p, np.nan)
    if method == IntervalMethod.JACKKNIFE and p:
        low, high = cohen.jackknife_intervals(result.confusion, level)
    elif method == IntervalMethod.BOOTSTRAP and p:
        if rng is None:
            raise ValueError("a bootstrap needs a random generator")
        low, high = cohen.bootstrap_intervals(
            result.confusion, level, rng, settings.bootstrap_resamples
        )
    out = []
    for i, (a, b, n, kappa) in enumerate(
        zip(  # bounded by the number of rater pairs
            result.rater_a.tolist(),
            result.rater_b.tolist(),
            result.n_items.tolist(),
            result.kappa.tolist(),
            strict=True,
        )
    ):
        reason = None if np.isfinite(kappa) else SINGLE_CATEGORY_PAIR
        interval: intervals.Interval | None = None
        if method != IntervalMethod.NONE:
            interval = (
                (float(low[i]), float(high[i]), None)
                if np.isfinite(low[i])
                else (None, None, "no interval: too few shared items or undefined without one")
            )
        measure = make_measure(kappa, n, reason, BandScale.LANDIS_KOCH, interval, settings)
        out.append(CohenPair(names[a], names[b], measure, n))
    return tuple(out)


SINGLE_CATEGORY_PAIR = "both raters used one single category on their shared items"
