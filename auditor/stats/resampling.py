"""Resampling of the project measures that depend on the raters' own repeats: rho (its
co-agreement table, the bootstrap and jackknife re-estimating every rater's Y, and its default
interval) and the R&R split (docs/measures.md, "Choices made where the sources are silent")."""

from __future__ import annotations

import dataclasses

import numpy as np

from auditor.domain import ProjectSettings, RaterModel, RhoUnrated
from auditor.stats import intervals, reestimate, rho
from auditor.stats.estimators import Estimator
from auditor.stats.selfagreement import RaterFit, SelfAgreement
from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals

# rho's co-agreement table (K, R, R) above this many cells is not built: no rho interval
MAX_PAIR_TABLE = 1 << 24
_FILL = {RhoUnrated.POOL: None, RhoUnrated.PERFECT: 1.0, RhoUnrated.EXCLUDE: 0.0}


def rho_resampling(
    est: Estimator,
    result: rho.Rho,
    table: GroupTable,
    model: SelfAgreement,
    rater_fit: RaterFit,
    settings: ProjectSettings,
    seed: int,
) -> Estimator:
    """rho's intervals re-estimate every rater's Y within each resample (``reestimate``)."""
    k, n_raters = table.counts.shape[1], model.sa.shape[0]
    if k * n_raters * n_raters > MAX_PAIR_TABLE or result.per_item is None:
        return dataclasses.replace(est, no_interval="too many raters for rho's interval")
    rated = model.n_items > 0
    pairs = rho.co_agreement(table, rated, settings.rho_unrated, k)
    if rater_fit.mode == RaterModel.MOMENTS:
        values, transform = model.cell_sa, reestimate.sqrt_reliability
    else:
        assert rater_fit.cell_x is not None
        values, transform = rater_fit.cell_x, reestimate.one_minus
    repeats = reestimate.repeats_for(
        values,
        model.cell_rater,
        model.cell_item,
        table.items,
        table.counts,
        rated,
        transform,
        _FILL[settings.rho_unrated],
    )
    mode = settings.rho_mode

    def evaluate(y: np.ndarray, shares: np.ndarray) -> np.ndarray:
        return rho.evaluate(pairs, y, shares, mode)

    per_item, used = result.per_item, result.used
    assert used is not None
    rng = np.random.default_rng([seed, 1])
    return dataclasses.replace(
        est,
        leave_one_out=lambda: reestimate.leave_one_out(repeats, per_item, used, evaluate),
        replicate=lambda w: reestimate.replicates(repeats, per_item, used, evaluate, w, rng),
        jackknife_interval=lambda level: _rho_jackknife(
            est.value, repeats, per_item, used, evaluate, level
        ),
    )


def _rho_jackknife(
    value: float,
    repeats: reestimate.Repeats,
    per_item: np.ndarray,
    used: np.ndarray,
    evaluate: reestimate.Evaluate,
    level: float,
) -> intervals.Interval:
    """rho's default interval: the hull of the delete-one jackknife's normal interval and the
    jackknife carried through the clip by simulation (``reestimate.simulated_interval``).

    Each fails where the other holds: the normal interval linearises Y = sqrt(clip(self_kappa))
    and misses the truth when a rater's Y may be 0 (a purely random rater: 75-82% at 95%); the
    simulated one maps the draws through the concave root, which moves it down a second time
    when every Y is already biased low (many raters with few repeats each: 3 of 6 projects).
    """
    normal = intervals.jackknife(
        value,
        reestimate.leave_one_out(repeats, per_item, used, evaluate),
        level,
        floor=0.0,
        ceiling=1.0,
    )
    simulated = reestimate.simulated_interval(repeats, per_item, used, evaluate, level)
    if normal[0] is None or normal[1] is None:
        return simulated
    if simulated[0] is None or simulated[1] is None:
        return normal
    return min(normal[0], simulated[0]), max(normal[1], simulated[1]), None


def split_resampling(
    est: Estimator,
    totals: ItemTotals,
    slope: np.ndarray,
    table: GroupTable,
    model: SelfAgreement,
    seed: int,
) -> Estimator:
    """The R&R terms' intervals re-estimate every rater's SA within each resample.

    A term's item sum is linear in the raters' SA (``slope`` (R,) is its derivative).
    """
    repeats = reestimate.repeats_for(
        model.cell_sa,
        model.cell_rater,
        model.cell_item,
        table.items,
        table.counts,
        model.n_items > 0,
        reestimate.identity,
        None,
    )
    per_item = totals.features[:, 1]
    used = np.ones(per_item.shape[0], dtype=bool)

    def evaluate(sa: np.ndarray, shares: np.ndarray) -> np.ndarray:
        del shares
        result: np.ndarray = sa @ slope
        return result

    rng = np.random.default_rng([seed, 2])
    return dataclasses.replace(
        est,
        leave_one_out=lambda: reestimate.leave_one_out(repeats, per_item, used, evaluate),
        replicate=lambda w: reestimate.replicates(repeats, per_item, used, evaluate, w, rng),
    )
