"""Per-rater results: self-agreement, self-kappa, reliability, random choice and S vs the group.

The per-rater intervals run over the rater's repeated items (docs/measures.md, "Choices made
where the sources are silent", "Per-rater intervals"): SA_p is a mean of SA_pu, so its interval
is that of a mean (``intervals.grouped_means``); self_kappa, Y_p and x_p are monotone
functions of SA_p with the chance s held fixed (s comes from every pairable item, far more data
than a rater's repeats), so their bounds are the images of SA_p's.
In ``max_entropy`` mode x_p is itself a mean over repeated items and gets its own interval.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings, RaterModel, Scale
from auditor.stats import intervals, ordinal, reading
from auditor.stats.reporting import AMAX_EQUALS_AE, NO_REPEATS, make_measure
from auditor.stats.results import Measure, RaterResult
from auditor.stats.selfagreement import (
    SINGLE_CATEGORY,
    RaterFit,
    SelfAgreement,
    corrected_for_chance,
    kappa_to_reliability,
)
from auditor.stats.tables import GroupTable
from auditor.stats.totals import EPS

FEW_REPEATS = "the interval needs at least two repeated items"

Bounds = tuple[np.ndarray, np.ndarray]


def humans_only(model: SelfAgreement, rater_is_model: np.ndarray) -> SelfAgreement:
    """Drop the repeated cells of model raters: self-agreement is a human measure here."""
    keep = ~rater_is_model[model.cell_rater]
    if keep.all():
        return model
    return SelfAgreement(
        sa=np.where(rater_is_model, np.nan, model.sa),
        n_items=np.where(rater_is_model, 0, model.n_items),
        n_presentations=np.where(rater_is_model, 0, model.n_presentations),
        cell_sa=model.cell_sa[keep],
        cell_counts=model.cell_counts[keep],
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

    def by_jackknife() -> intervals.Interval:
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
        return intervals.jackknife(value, loo, level, floor=0.0)

    def by_bootstrap(rng: np.random.Generator) -> intervals.Interval:
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
        return intervals.percentile(
            np.concatenate(replicates), level, n_items=items.shape[0], floor=0.0, ceiling=1.0
        )

    interval = intervals.by_method(method, None, by_jackknife, by_bootstrap, rng)
    return make_measure(value, n_cells, None, "mean_self_agreement", interval, settings)


def _rater_bounds(
    model: SelfAgreement, fit: RaterFit, settings: ProjectSettings, rng: np.random.Generator | None
) -> dict[str, Bounds]:
    """Interval bounds (low, high), each (R,), NaN where there is none, per rater measure."""
    n_raters = model.sa.shape[0]

    def means(values: np.ndarray) -> Bounds:
        return intervals.grouped_means(
            values,
            model.cell_rater,
            n_raters,
            settings.interval_method.value,
            settings.interval_level,
            rng,
            settings.bootstrap_resamples,
        )

    sa_low, sa_high = means(model.cell_sa)
    out = {"sa": (sa_low, sa_high)}
    if fit.reason is not None:
        return out
    s = fit.chance
    kappa_low, kappa_high = corrected_for_chance(sa_low, s), corrected_for_chance(sa_high, s)
    out["self_kappa"] = (kappa_low, kappa_high)
    if fit.mode == RaterModel.MOMENTS:
        y_low, y_high = kappa_to_reliability(kappa_low), kappa_to_reliability(kappa_high)
        out["reliability"] = (y_low, y_high)
        out["x"] = (1.0 - y_high, 1.0 - y_low)
    else:
        assert fit.cell_x is not None
        x_low, x_high = means(fit.cell_x)
        out["x"] = (x_low, x_high)
        out["reliability"] = (1.0 - x_high, 1.0 - x_low)
    return out


def _interval(bounds: dict[str, Bounds], key: str, p: int, k: int) -> intervals.Interval | None:
    if key not in bounds:
        return None
    low, high = bounds[key][0][p], bounds[key][1][p]
    if np.isfinite(low) and np.isfinite(high):
        return float(low), float(high), None
    return None, None, FEW_REPEATS if k < 2 else intervals.TOO_FEW_ITEMS


def rater_results(
    labels: LabelArrays,
    table: GroupTable,
    model: SelfAgreement,
    fit: RaterFit,
    s_vs_group: tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None],
    names: tuple[str, ...],
    settings: ProjectSettings,
    rng: np.random.Generator | None,
) -> tuple[RaterResult, ...]:
    """One ``RaterResult`` per human rater, in rater-index order."""
    bounds: dict[str, Bounds] = {}
    if settings.interval_method != IntervalMethod.NONE:
        bounds = _rater_bounds(model, fit, settings, rng)
    s_value, s_n, s_low, s_high = s_vs_group
    # per-rater S has a jackknife interval whatever the project method (see docs/measures.md)
    s_settings = ProjectSettings(
        interval_method=IntervalMethod.JACKKNIFE, interval_level=settings.interval_level
    )
    per_rater = (
        ("sa", model.sa, "self_agreement"),
        ("self_kappa", fit.self_kappa, "self_kappa"),
        ("reliability", fit.reliability, "reliability"),
        ("x", fit.random_choice, "random_choice"),
    )
    # with one category in use the group "does not agree beyond chance" only because chance
    # agreement is 1: say the cause
    undefined_s = SINGLE_CATEGORY if 1.0 - fit.chance <= EPS else AMAX_EQUALS_AE
    out = []
    for p in np.flatnonzero(~labels.rater_is_model):  # bounded by the number of raters
        k = int(model.n_items[p])
        per: dict[str, Measure] = {}
        for key, values, metric in per_rater:
            reason = None if k else NO_REPEATS
            if reason is None and key != "sa":
                reason = fit.reason
            per[key] = make_measure(
                float(values[p]), k, reason, metric, _interval(bounds, key, int(p), k), settings
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
                self_kappa=per["self_kappa"],
                reliability=per["reliability"],
                random_choice=per["x"],
                s_vs_group=make_measure(
                    float(s_value[p]),
                    int(s_n[p]),
                    s_reason or (None if np.isfinite(s_value[p]) else undefined_s),
                    "s_vs_group",
                    s_interval,
                    s_settings if s_interval is not None else settings,
                ),
                n_repeated_items=k,
                n_presentations=int(model.n_presentations[p]),
            )
        )
    return tuple(out)


NO_PAIRABLE_ITEM = "no item she shares with another human rater"


def with_confusion(
    results: tuple[RaterResult, ...],
    labels: LabelArrays,
    table: GroupTable,
    settings: ProjectSettings,
    rng: np.random.Generator | None,
    scale: Scale,
    carried: np.ndarray | None = None,
) -> tuple[RaterResult, ...]:
    """Each rater's confusion against the others (row-normalised, docs/measures.md, "Reading a
    coefficient") and on an ordinal scale her grade bias, with an interval over her items
    (``carried``: the confusion's sums from the pairwise Cohen pass, when it made them)."""
    n_raters, k = table.rater_counts.shape
    confusion = reading.rater_confusion(table, carried)
    shares = reading.row_normalised(confusion)
    counts = table.rater_counts
    bias_values: np.ndarray | None = None
    bias_n = np.zeros(n_raters, dtype=np.int64)
    low = high = np.full(n_raters, np.nan)
    if scale == Scale.ORDINAL:
        bias_values = reading.grade_bias_from(confusion, counts)
        bias_n = counts.sum(axis=1)
        if settings.interval_method != IntervalMethod.NONE:
            differences = ordinal.grade_differences(table)
            low, high = intervals.grouped_means(
                differences,
                table.label_rater,
                n_raters,
                settings.interval_method.value,
                settings.interval_level,
                rng,
                settings.bootstrap_resamples,
                floor=-(k - 1.0),
                ceiling=k - 1.0,
            )
    out = []
    for p, result in zip(np.flatnonzero(~labels.rater_is_model), results, strict=True):
        rows = tuple(
            tuple(None if not np.isfinite(v) else float(v) for v in row) for row in shares[p]
        )
        grade: Measure | None = None
        if bias_values is not None:
            n = int(bias_n[p])
            interval: intervals.Interval | None = None
            if settings.interval_method != IntervalMethod.NONE:
                interval = (
                    (float(low[p]), float(high[p]), None)
                    if np.isfinite(low[p])
                    else (None, None, "no interval: too few items")
                )
            grade = make_measure(
                float(bias_values[p]),
                n,
                None if n else NO_PAIRABLE_ITEM,
                "grade_bias",
                interval,
                settings,
            )
        out.append(
            dataclasses.replace(
                result,
                grade_bias=grade,
                confusion=rows,
                confusion_n=tuple(int(c) for c in counts[p]),
            )
        )
    return tuple(out)
