"""Resampling items for measures that depend on the raters' own repeats (rho, the R&R split).

The resampling unit is the item. An item carries its own term of the measure (its agreeing
pairs) and, through the repeated looks raters gave it, part of those raters' self-agreement,
hence of Y_p (rho) or SA_p (the split). Holding Y_p fixed while resampling items leaves out the
main source of rho's spread (at 3000 items with repeats on 20% of them the interval came out
4 times too narrow, and covered the truth in 3 of 12 projects). So every jackknife value and
every bootstrap replicate here re-estimates the raters' parameters from the remaining or
redrawn items.

A measure is S / n with S = sum over used items of f_u(theta, P), theta (R,) the raters'
parameters and P (K,) the category shares of the pairable items. A resample with item weights
w and re-estimated theta', P' is taken as

    S' = sum_u w_u f_u(theta, P) + [S(theta', P') - S(theta, P)]

where the bracket is evaluated exactly by the measure (rho: from its pair co-agreement table;
the split: it is linear in SA). Only the product of the weights' change and the parameters'
change is dropped, a second-order term. Deleting one item changes SA only for the raters with a
repeat on it (closed-form leave-one-out mean); it changes P by one item's labels, a small smooth
change taken to first order (a numerical gradient in P, computed once).

A rater left without any repeated item in a resample keeps its full-sample parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from auditor.stats.intervals import CHUNK_CELLS
from auditor.stats.selfagreement import (
    chance_agreement,
    corrected_for_chance,
    kappa_to_reliability,
)

# theta (b, R) from the raters' mean cell values (b, R) and P (b, K)
Transform = Callable[[np.ndarray, np.ndarray], np.ndarray]
# S (b,) from theta (b, R) and P (b, K)
Evaluate = Callable[[np.ndarray, np.ndarray], np.ndarray]

# parameters evaluated at a time: rows * R^2 (each evaluation may build (rows, R, R) arrays)
_CELLS = 1 << 20
_STEP = 1e-6  # numerical derivative step in P


def sqrt_reliability(means: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Y = sqrt(clip((SA - s) / (1 - s), 0, 1)), s = sum_c P(c)^2 per row (the moments model)."""
    s = chance_agreement(shares)[:, None]
    return kappa_to_reliability(corrected_for_chance(means, s))


def one_minus(means: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Y = 1 - mean x (the max_entropy model: x_p is a mean over repeated items)."""
    del shares
    return 1.0 - means


def identity(means: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """SA itself (the R&R split uses the raters' self-agreement directly)."""
    del shares
    return means


@dataclass(frozen=True)
class Repeats:
    """The raters' repeated cells as resampling units see them.

    cell_value : (G,) the per-cell value whose per-rater mean is the parameter (SA_pu or x_pu).
    cell_rater : (G,). cell_unit : (G,) the unit of each cell: its position among the N
        pairable items, or N + e for the e-th repeated item that is not pairable.
    n_units : N + E. counts : (N, K) category counts of the pairable items (P comes from them).
    rated : (R,) raters with repeats; fill : parameter of the others (None: mean over rated).
    """

    cell_value: np.ndarray
    cell_rater: np.ndarray
    cell_unit: np.ndarray
    n_units: int
    counts: np.ndarray
    rated: np.ndarray
    transform: Transform
    fill: float | None

    @property
    def n_raters(self) -> int:
        return int(self.rated.shape[0])

    def sums(self) -> tuple[np.ndarray, np.ndarray]:
        r = self.n_raters
        total = np.bincount(self.cell_rater, weights=self.cell_value, minlength=r)
        return total, np.bincount(self.cell_rater, minlength=r).astype(float)

    @cached_property
    def full_means(self) -> np.ndarray:
        """Mean cell value per rater (R,), NaN without repeats."""
        total, k = self.sums()
        result: np.ndarray = np.divide(total, k, out=np.full(k.shape, np.nan), where=k > 0)
        return result

    def means(self) -> np.ndarray:
        return self.full_means

    @property
    def rows(self) -> int:
        """Parameter rows to evaluate at a time."""
        return max(1, _CELLS // max(self.n_raters**2, 1))

    def shares(self) -> np.ndarray:
        total = self.counts.sum(axis=0).astype(float)
        result: np.ndarray = total / max(total.sum(), 1.0)
        return result

    def theta(self, means: np.ndarray, shares: np.ndarray) -> np.ndarray:
        """Parameters (b, R) from mean cell values (b, R; NaN: keep the full-sample mean)."""
        full = self.means()
        means = np.where(np.isnan(means), full[None, :], means)
        theta = self.transform(means, shares)
        unrated = ~self.rated
        if unrated.any():
            if self.fill is None:
                theta[:, unrated] = theta[:, self.rated].mean(axis=1, keepdims=True)
            else:
                theta[:, unrated] = self.fill
        return theta


def repeats_for(
    cell_value: np.ndarray,
    cell_rater: np.ndarray,
    cell_item: np.ndarray,
    pairable_items: np.ndarray,
    counts: np.ndarray,
    rated: np.ndarray,
    transform: Transform,
    fill: float | None,
) -> Repeats:
    """``Repeats`` with each cell mapped to its unit (pairable position, else an extra unit)."""
    n = pairable_items.shape[0]
    position = np.searchsorted(pairable_items, cell_item)
    inside = position < n
    inside[inside] = pairable_items[position[inside]] == cell_item[inside]
    extra_items, extra_index = np.unique(cell_item[~inside], return_inverse=True)
    unit = position.astype(np.int64)
    unit[~inside] = n + extra_index.reshape(-1)
    return Repeats(
        cell_value, cell_rater, unit, n + extra_items.shape[0], counts, rated, transform, fill
    )


def _evaluate_rows(
    evaluate: Evaluate, theta: np.ndarray, shares: np.ndarray, rows: int
) -> np.ndarray:
    out = np.empty(theta.shape[0])
    for low in range(0, theta.shape[0], rows):  # chunks bound the evaluation's temporaries
        out[low : low + rows] = evaluate(theta[low : low + rows], shares[low : low + rows])
    return out


def leave_one_out(
    repeats: Repeats, per_item: np.ndarray, used: np.ndarray, evaluate: Evaluate
) -> np.ndarray:
    """Delete-one-item values of S / n over every unit (pairable items, then extra units).

    per_item : f_u (N,) at the full-sample parameters (0 where unused); used : (N,) bool.
    """
    n_items = per_item.shape[0]
    shares = repeats.shares()
    theta = repeats.theta(repeats.means()[None, :], shares[None, :])
    base = float(evaluate(theta, shares[None, :])[0])
    change = np.zeros(repeats.n_units)
    # P: first order. d S(theta(P), P) / d P_c by central differences, once.
    k = shares.shape[0]
    steps = np.repeat(shares[None, :], 2 * k, axis=0)
    steps[np.arange(k), np.arange(k)] += _STEP
    steps[k + np.arange(k), np.arange(k)] -= _STEP
    means = np.repeat(repeats.means()[None, :], 2 * k, axis=0)
    at = _evaluate_rows(evaluate, repeats.theta(means, steps), steps, repeats.rows)
    gradient = (at[:k] - at[k:]) / (2 * _STEP)
    counts = repeats.counts.astype(float)
    total, looks = counts.sum(axis=0), counts.sum()
    left = np.maximum(looks - counts.sum(axis=1), 1.0)
    change[:n_items] = ((total[None, :] - counts) / left[:, None] - shares[None, :]) @ gradient
    # SA: exact leave-one-out means of the raters with a repeat on the unit
    if repeats.cell_rater.shape[0]:
        sums, k_r = repeats.sums()
        k_cell = k_r[repeats.cell_rater]
        loo_mean = np.divide(
            sums[repeats.cell_rater] - repeats.cell_value,
            k_cell - 1.0,
            out=np.full(k_cell.shape, np.nan),
            where=k_cell > 1,
        )
        units, row = np.unique(repeats.cell_unit, return_inverse=True)
        row = row.reshape(-1)
        full = repeats.means()
        order = np.argsort(row, kind="stable")
        bounds = np.searchsorted(
            row[order], np.arange(0, units.shape[0] + repeats.rows, repeats.rows)
        )
        for chunk, low in enumerate(range(0, units.shape[0], repeats.rows)):  # bounded rows
            high = min(low + repeats.rows, units.shape[0])
            mine = order[bounds[chunk] : bounds[chunk + 1]]
            block = np.repeat(full[None, :], high - low, axis=0)
            block[row[mine] - low, repeats.cell_rater[mine]] = loo_mean[mine]
            at_shares = np.repeat(shares[None, :], high - low, axis=0)
            change[units[low:high]] += evaluate(repeats.theta(block, at_shares), at_shares) - base
    own = np.zeros(repeats.n_units)
    own[:n_items] = np.where(used, per_item, 0.0)
    counted = np.zeros(repeats.n_units)
    counted[:n_items] = used
    total_s, n_used = float(own.sum()), float(counted.sum())
    remaining = n_used - counted
    result: np.ndarray = np.divide(
        total_s - own + change,
        remaining,
        out=np.full(repeats.n_units, np.nan),
        where=remaining > 0,
    )
    return result


def replicates(
    repeats: Repeats,
    per_item: np.ndarray,
    used: np.ndarray,
    evaluate: Evaluate,
    weights: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Bootstrap values of S / n for item weights (b, N); extra units are redrawn from ``rng``."""
    b, n_items = weights.shape
    n_extra = repeats.n_units - n_items
    if n_extra:
        draws = rng.integers(0, n_extra, size=(b, n_extra)) + np.arange(b)[:, None] * n_extra
        extra = np.bincount(draws.ravel(), minlength=b * n_extra).reshape(b, n_extra)
        unit_weights = np.hstack([weights, extra.astype(float)])
    else:
        unit_weights = weights
    # one pass over the weights: [category counts (K), the item's term, used]
    k = repeats.counts.shape[1]
    totals = weights @ np.column_stack(
        [repeats.counts.astype(float), np.where(used, per_item, 0.0), used.astype(float)]
    )
    counts, own, n_used = totals[:, :k], totals[:, k], totals[:, k + 1]
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    r = repeats.n_raters
    means = np.full((b, r), np.nan)
    g = repeats.cell_rater.shape[0]
    if g:
        order = np.argsort(repeats.cell_rater, kind="stable")
        sorted_rater = repeats.cell_rater[order]
        starts = np.flatnonzero(np.diff(sorted_rater, prepend=-1))
        owners = sorted_rater[starts]
        unit, value = repeats.cell_unit[order], repeats.cell_value[order]
        rows = max(1, CHUNK_CELLS // 4 // g)
        for low in range(0, b, rows):  # bounded (rows, G) cell weights
            cell_weight = unit_weights[low : low + rows, unit]
            total = np.add.reduceat(cell_weight * value, starts, axis=1)
            seen = np.add.reduceat(cell_weight, starts, axis=1)
            means[low : low + rows, owners] = np.divide(
                total, seen, out=np.full(total.shape, np.nan), where=seen > 0
            )
    full_shares = repeats.shares()[None, :]
    base = float(evaluate(repeats.theta(repeats.means()[None, :], full_shares), full_shares)[0])
    change = _evaluate_rows(evaluate, repeats.theta(means, shares), shares, repeats.rows) - base
    result: np.ndarray = np.divide(own + change, n_used, out=np.full(b, np.nan), where=n_used > 0)
    return result


# Draws of the raters' parameters behind rho's default interval (``simulated_interval``).
SIMULATED_DRAWS = 2000
SIMULATION_SEED = 20240924


def simulated_interval(
    repeats: Repeats,
    per_item: np.ndarray,
    used: np.ndarray,
    evaluate: Evaluate,
    level: float,
) -> tuple[float | None, float | None, str | None]:
    """rho's interval by the jackknife on the scale where it is smooth, carried through the
    clip by simulation.

    rho = A + [S(theta(SA), P) - S(theta_hat, P)] / n: A, the mean item term at the fitted
    parameters, is smooth in the items (its jackknife se, P's change included to first order);
    each rater's SA_p is a mean over her repeated items (se s_p / sqrt(k_p)). The delete-one
    jackknife linearises Y = sqrt(clip(self_kappa, 0, 1)) around its estimate, which fails near
    0: a slightly positive self-kappa reads Y ~ 0.2 with a small se, while the truth may be 0
    (covered 75-82% of the time at 95% with a purely random rater). Here SA is drawn from the
    normal its jackknife gives (raters independent of each other and of A), mapped through the
    same clipped root, and the interval is the percentile interval of A + the resulting change:
    skewed where the root is, reaching 0 where a rater's Y may be 0. The draws use a fixed seed,
    so the interval is a function of the data.
    """
    n_items = per_item.shape[0]
    n_used = float(used.sum())
    if n_used < 2:
        return None, None, "the jackknife needs at least two items"
    shares = repeats.shares()
    # A's delete-one values: the item's own term and P's first-order change, SA held
    full = repeats.means()
    held = Repeats(
        repeats.cell_value[:0],
        repeats.cell_rater[:0],
        repeats.cell_unit[:0],
        repeats.n_units,
        repeats.counts,
        repeats.rated,
        repeats.transform,
        repeats.fill,
    )
    held.__dict__["full_means"] = full
    values = leave_one_out(held, per_item, used, evaluate)[:n_items][used]
    centred = values - values.mean()
    se_items = float(np.sqrt((values.shape[0] - 1) / values.shape[0] * (centred**2).sum()))
    total, k = repeats.sums()
    squares = np.bincount(repeats.cell_rater, weights=repeats.cell_value**2, minlength=k.shape[0])
    variance = np.divide(
        squares - np.divide(total**2, k, out=np.zeros_like(total), where=k > 0),
        k * (k - 1.0),
        out=np.zeros_like(total),
        where=k > 1,
    )
    se_rater = np.sqrt(np.maximum(variance, 0.0))
    rng = np.random.default_rng(SIMULATION_SEED)
    draws = full[None, :] + rng.standard_normal((SIMULATED_DRAWS, k.shape[0])) * se_rater[None, :]
    draws = np.where(np.isnan(full)[None, :], np.nan, draws)
    at = np.repeat(shares[None, :], SIMULATED_DRAWS, axis=0)
    base = float(evaluate(repeats.theta(full[None, :], shares[None, :]), shares[None, :])[0])
    change = _evaluate_rows(evaluate, repeats.theta(draws, at), at, repeats.rows) - base
    estimate = float(np.where(used, per_item, 0.0).sum() / n_used)
    simulated = estimate + rng.standard_normal(SIMULATED_DRAWS) * se_items + change / n_used
    tail = (1.0 - level) / 2.0
    low, high = (float(v) for v in np.quantile(simulated, [tail, 1.0 - tail]))
    return max(low, 0.0), min(max(high, 0.0), 1.0), None
