"""Coefficients that are functions of item totals, and their closed-form resampling.

Most measures here are a smooth function g of sums over items of per-item sufficient
statistics F (shape (N, f)). Then, with the same g:

* the estimate is g(F.sum(0)),
* the leave-one-item-out jackknife values are g(F.sum(0) - F), shape (N,): O(N f), no refits,
* bootstrap replicates are g(W @ F) for a matrix W (B, N) of resampling counts.

g takes totals of shape (..., f) and returns values of shape (...) with NaN where undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

TotalsFunction = Callable[[np.ndarray], np.ndarray]

# A denominator this close to zero means the coefficient is undefined (0/0 up to rounding).
EPS = 1e-12


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray | float) -> np.ndarray:
    """numerator / denominator, NaN where |denominator| <= EPS (shapes broadcast)."""
    numerator, denominator = np.broadcast_arrays(
        np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    )
    out = np.full(numerator.shape, np.nan)
    ok = np.abs(denominator) > EPS
    np.divide(numerator, denominator, out=out, where=ok)
    return out


@dataclass(frozen=True)
class ItemTotals:
    """Per-item statistics F (N, f) and the function g of their totals."""

    features: np.ndarray
    function: TotalsFunction
    used: np.ndarray | None = None  # (N,) bool: items the measure uses; None means all

    @cached_property
    def total(self) -> np.ndarray:
        """F.sum(0), summed once for the estimate and the jackknife (a column sum of a narrow
        (N, f) array is slow)."""
        result: np.ndarray = self.features.sum(axis=0)
        return result

    def estimate(self) -> float:
        return float(self.function(self.total))

    @property
    def n_used(self) -> int:
        return int(self.features.shape[0] if self.used is None else self.used.sum())

    def leave_one_out(self) -> np.ndarray:
        """g of the totals without each used item, shape (n_used,).

        Items the measure does not use would only repeat the estimate and shrink the variance.
        """
        features = self.features if self.used is None else self.features[self.used]
        return self.function(self.total - features)

    def resampled(self, weights: np.ndarray) -> np.ndarray:
        """g of weighted totals, weights shape (B, N) -> shape (B,)."""
        return self.function(weights @ self.features)


def mean_of(per_item: np.ndarray, mask: np.ndarray | None = None) -> ItemTotals:
    """The mean over items (or over the items in ``mask``) of ``per_item`` (N,)."""
    used = np.ones_like(per_item, dtype=float) if mask is None else mask.astype(float)
    features = np.column_stack([used, np.where(used > 0, per_item, 0.0)])
    return ItemTotals(features, _mean, None if mask is None else mask.astype(bool))


def _mean(totals: np.ndarray) -> np.ndarray:
    return safe_ratio(totals[..., 1], totals[..., 0])


def sharing(
    features: np.ndarray | int, *functions: TotalsFunction, total: np.ndarray | None = None
) -> list[ItemTotals]:
    """Several measures over the same per-item statistics ``features``: one ``ItemTotals`` per
    function, all reading one column sum (summed once here, not once per measure).

    Without intervals only the totals matter: ``features`` may then be the number of items N
    and ``total`` the column sums computed another way (a BLAS product instead of an (N, f)
    array); such an ``ItemTotals`` gives its estimate and refuses to resample (its features
    have no column).
    """
    if isinstance(features, int):
        if total is None:
            raise ValueError("totals without features need their column sums")
        features = np.empty((features, 0))
    elif total is None:
        total = features.sum(axis=0)
    out = []
    for function in functions:  # a handful of measures
        totals = ItemTotals(features, function)
        totals.__dict__["total"] = total  # the cached_property's slot
        out.append(totals)
    return out
