"""Confidence intervals over items: delete-one jackknife and seeded percentile bootstrap.

References: Efron and Tibshirani (1993), "An Introduction to the Bootstrap", ch. 11 (jackknife
standard error) and ch. 13 (percentile interval); Shah (2011) Section 4 suggests the jackknife
for S. The jackknife interval is estimate +- z * se with se^2 = (n-1)/n sum (theta_(i) -
theta_(.))^2, so it always contains its estimate. Every measure of this package is at most 1
(kappas, S, rho, shares, self-agreement, the R&R terms), so the symmetric normal interval is
clipped to 1 above: a self-agreement of 0.83 on six repeats reads [0.63, 1], not [0.63, 1.04].
The bootstrap draws items with replacement;
each resample is a row of counts W (B, N), generated in chunks so memory stays O(chunk * N).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from statistics import NormalDist
from typing import TypeVar

import numpy as np

from auditor.domain import IntervalMethod

# No measure exceeds 1; a normal interval that would is cut there.
UPPER_BOUND = 1.0

# A jackknife spread of exactly zero from fewer items than this says nothing about the spread
# (two raters agreeing on 3 items would read [1, 1]); the interval is withheld instead.
MIN_ITEMS_FOR_ZERO_SPREAD = 10
TOO_FEW_ITEMS = "too few items to estimate the spread"

# Bootstrap weight rows per chunk: about 2**24 counts (128 MB of float64) at a time.
CHUNK_CELLS = 1 << 24

Interval = tuple[float | None, float | None, str | None]

T = TypeVar("T")


def by_method(
    method: IntervalMethod | str,
    none: T,
    jackknife: Callable[[], T],
    bootstrap: Callable[[np.random.Generator], T],
    rng: np.random.Generator | None,
) -> T:
    """The one dispatch on the interval method: ``none`` when no interval is asked for, else
    the jackknife or the bootstrap computation, the latter only with a random generator."""
    if method == IntervalMethod.NONE:
        return none
    if method == IntervalMethod.JACKKNIFE:
        return jackknife()
    if rng is None:
        raise ValueError("a bootstrap needs a random generator")
    return bootstrap(rng)


def z_value(level: float) -> float:
    """Two-sided standard normal quantile for ``level`` (0.95 -> 1.95996...)."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def jackknife(
    estimate: float,
    leave_one_out: np.ndarray,
    level: float,
    floor: float | None = None,
    ceiling: float | None = UPPER_BOUND,
) -> Interval:
    """Normal interval from the delete-one values (n,); undefined if any of them is.

    ``floor``, ``ceiling``: the lowest and highest values the measure can take (0 for a share;
    1 for most measures; None where there is no bound), where the interval is cut.
    """
    n = leave_one_out.shape[0]
    if n < 2:
        return None, None, "the jackknife needs at least two items"
    if not np.isfinite(leave_one_out).all():
        return None, None, "undefined once some item is left out"
    centred = leave_one_out - leave_one_out.mean()
    return jackknife_from_spread(estimate, float((centred**2).sum()), n, level, floor, ceiling)


def jackknife_from_spread(
    estimate: float,
    spread: float,
    n: int,
    level: float,
    floor: float | None = None,
    ceiling: float | None = UPPER_BOUND,
) -> Interval:
    """``jackknife`` from the sum of squared deviations of n >= 2 finite delete-one values from
    their mean (when they are summed elsewhere, e.g. for many raters at once)."""
    se = float(np.sqrt((n - 1) / n * spread))
    if se <= 1e-12 * max(1.0, abs(estimate)) and n < MIN_ITEMS_FOR_ZERO_SPREAD:
        return None, None, TOO_FEW_ITEMS
    half = z_value(level) * se
    # an estimate a rounding error past the range (4/3 + 2e-16) keeps its interval around it
    low = estimate - half if floor is None else max(estimate - half, min(floor, estimate))
    high = estimate + half if ceiling is None else min(estimate + half, max(ceiling, estimate))
    return low, high, None


def percentile(
    replicates: np.ndarray,
    level: float,
    n_items: int | None = None,
    floor: float | None = None,
    ceiling: float | None = None,
) -> Interval:
    """Percentile interval of bootstrap replicates (B,); NaN replicates are dropped.

    As for the jackknife, a zero-width interval from fewer than ``MIN_ITEMS_FOR_ZERO_SPREAD``
    items (``n_items``) says nothing about the spread and is withheld; ``floor``/``ceiling``
    are the measure's range (replicates computed to first order may stray past it).
    """
    finite = replicates[np.isfinite(replicates)]
    if finite.shape[0] < max(10, replicates.shape[0] // 2):
        return None, None, "undefined in most bootstrap resamples"
    tail = (1.0 - level) / 2.0
    low, high = (float(v) for v in np.quantile(finite, [tail, 1.0 - tail]))
    few = n_items is not None and n_items < MIN_ITEMS_FOR_ZERO_SPREAD
    if few and high - low <= 1e-12 * max(1.0, abs(high)):
        return None, None, TOO_FEW_ITEMS
    if floor is not None:
        low, high = max(low, floor), max(high, floor)
    if ceiling is not None:
        low, high = min(low, ceiling), min(high, ceiling)
    return low, high, None


def resample_weights(
    rng: np.random.Generator, n_items: int, resamples: int
) -> Iterator[np.ndarray]:
    """Yield chunks of resampling counts, each shape (b, n_items) float64, b rows summing to n.

    Each row is the multinomial count vector of n_items draws with replacement, built from
    uniform indices with one ``bincount`` per chunk (row offset folded into the index).
    """
    rows = max(1, min(resamples, CHUNK_CELLS // max(n_items, 1)))
    done = 0
    while done < resamples:
        b = min(rows, resamples - done)
        draws = rng.integers(0, n_items, size=(b, n_items), dtype=np.int64)
        draws += np.arange(b, dtype=np.int64)[:, None] * n_items
        counts = np.bincount(draws.ravel(), minlength=b * n_items).reshape(b, n_items)
        yield counts.astype(float)
        done += b


def grouped_means(
    values: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    method: IntervalMethod | str,
    level: float,
    rng: np.random.Generator | None,
    resamples: int,
    floor: float = 0.0,
    ceiling: float = UPPER_BOUND,
) -> tuple[np.ndarray, np.ndarray]:
    """Intervals for the mean of ``values`` (G,) within each group (e.g. a rater's repeated items).

    ``floor``, ``ceiling``: the range of the values (shares by default: [0, 1]), where the
    jackknife's normal interval is cut.

    Jackknife: the delete-one se of a mean is s / sqrt(k). Bootstrap: each group's own values
    are redrawn with replacement, all groups at once. Returns (low, high), each (n_groups,),
    NaN where a group has fewer than two values.
    """
    k = np.bincount(group, minlength=n_groups)
    total = np.bincount(group, weights=values, minlength=n_groups)
    mean = np.divide(total, k, out=np.full(n_groups, np.nan), where=k > 0)
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    enough = k >= 2
    if not enough.any():
        return low, high

    def by_jackknife() -> tuple[np.ndarray, np.ndarray]:
        spread = np.bincount(group, weights=(values - mean[group]) ** 2, minlength=n_groups)
        se = np.sqrt(spread[enough] / (k[enough] * (k[enough] - 1)))
        half = z_value(level) * se
        # the values lie in [floor, ceiling] (shares: self-agreement, random choice): so does
        # their mean
        low[enough] = np.maximum(mean[enough] - half, floor)
        high[enough] = np.minimum(mean[enough] + half, ceiling)
        # zero spread from a handful of repeated items says nothing: no interval (NaN)
        blind = (se <= 1e-12) & (k[enough] < MIN_ITEMS_FOR_ZERO_SPREAD)
        low[np.flatnonzero(enough)[blind]] = np.nan
        high[np.flatnonzero(enough)[blind]] = np.nan
        return low, high

    def by_bootstrap(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(group, kind="stable")
        sorted_values = values[order]
        starts = np.cumsum(k) - k
        slot_group = group[order]
        draws_per_chunk = max(1, min(resamples, CHUNK_CELLS // max(values.shape[0], 1)))
        nonempty = np.flatnonzero(k > 0)
        means: list[np.ndarray] = []
        done = 0
        while done < resamples:
            b = min(draws_per_chunk, resamples - done)
            pick = starts[slot_group] + (rng.random((b, values.shape[0])) * k[slot_group]).astype(
                np.int64
            )
            sums = np.add.reduceat(sorted_values[pick], starts[nonempty], axis=1)
            means.append(sums / k[nonempty])
            done += b
        tail = (1.0 - level) / 2.0
        quantiles = np.quantile(np.concatenate(means), [tail, 1.0 - tail], axis=0)
        # as for the jackknife: zero width from a handful of repeated items says nothing (NaN)
        blind = (quantiles[1] - quantiles[0] <= 1e-12) & (k[nonempty] < MIN_ITEMS_FOR_ZERO_SPREAD)
        chosen = enough[nonempty] & ~blind
        low[nonempty[chosen]] = quantiles[0][chosen]
        high[nonempty[chosen]] = quantiles[1][chosen]
        return low, high

    return by_method(method, (low, high), by_jackknife, by_bootstrap, rng)
