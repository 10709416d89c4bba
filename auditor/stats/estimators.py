"""The project measures over pairable items as estimators (a value and the ways to resample
it), and their intervals by the project's method, the bootstrap resamples shared by all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from auditor.domain import IntervalMethod, ProjectSettings
from auditor.stats import intervals
from auditor.stats.totals import ItemTotals

TOO_MANY_PATTERNS = "too many rater-set patterns to bootstrap; use the jackknife"
# Measures that are shares or indices in [0, 1] (per-category ones are keyed "name:c").
SHARES = (
    "observed_agreement",
    "rho",
    "prevalence_index",
    "bias_index",
    "category_share",
    "specific_agreement",
)


def value_range(name: str, k: int) -> tuple[float, float]:
    """The values measure ``name`` can take with K = ``k`` categories; intervals are cut there.

    Shares and indices (observed agreement, rho, the prevalence and bias indices, category
    shares, specific agreement) lie in [0, 1]; the kappa-type coefficients in [-1, 1];
    with a, b in [0, 1]: kappa_BM = bp = 1 - K/(K-1) (1 - b) in [-1/(K-1), 1], Repeatability =
    K/(K-1) (1 - a) in [0, K/(K-1)] (K/(K-1) when raters never agree with themselves), and
    RaterEffect = K/(K-1) (1 - 1/L) (a - b) in [-K/(K-1), K/(K-1)].
    """
    scale = k / max(k - 1, 1)
    if name in SHARES or name.split(":")[0] in SHARES:
        return 0.0, 1.0
    if name in ("expected_agreement", "bp"):
        return 1.0 - scale, 1.0
    if name == "repeatability":
        return 0.0, scale
    if name == "rater_effect":
        return -scale, scale
    return -1.0, 1.0


@dataclass
class Estimator:
    """A project measure over pairable items and the ways to resample it."""

    value: float
    n: int
    undefined: str
    leave_one_out: Callable[[], np.ndarray]
    replicate: Callable[[np.ndarray], np.ndarray] | None
    no_interval: str | None = None  # why no interval can be given, when none can
    jackknife_only: bool = False  # its interval is the jackknife whatever the method
    # its own interval in place of the normal one from ``leave_one_out`` (rho: the jackknife
    # carried through the clip of Y by simulation), given the level
    jackknife_interval: Callable[[float], intervals.Interval] | None = None


def from_totals(totals: ItemTotals, undefined: str, keep: bool = True) -> Estimator:
    """An estimator; without intervals (``keep`` False) the per-item statistics are dropped."""
    if not keep:
        return Estimator(totals.estimate(), totals.n_used, undefined, _none, None)
    return Estimator(
        totals.estimate(), totals.n_used, undefined, totals.leave_one_out, totals.resampled
    )


def _none() -> np.ndarray:
    raise ValueError("intervals were not requested")


def project_intervals(
    estimators: dict[str, Estimator],
    settings: ProjectSettings,
    n_items: int,
    k: int,
    rng: np.random.Generator | None,
) -> dict[str, intervals.Interval]:
    """Intervals of the project measures; bootstrap resamples are shared by all of them."""
    method, level = settings.interval_method, settings.interval_level
    defined = {k: e for k, e in estimators.items() if np.isfinite(e.value)}
    if method == IntervalMethod.NONE or not defined:
        return {}
    result: dict[str, intervals.Interval] = {
        name: (None, None, e.no_interval) for name, e in defined.items() if e.no_interval
    }
    defined = {name: e for name, e in defined.items() if not e.no_interval}

    def jackknife(name: str, e: Estimator) -> intervals.Interval:
        if e.jackknife_interval is not None:
            return e.jackknife_interval(level)
        low, high = value_range(name, k)
        return intervals.jackknife(e.value, e.leave_one_out(), level, floor=low, ceiling=high)

    def by_jackknife() -> dict[str, intervals.Interval]:
        for name, e in defined.items():
            result[name] = jackknife(name, e)
        return result

    def by_bootstrap(rng: np.random.Generator) -> dict[str, intervals.Interval]:
        resampled = {
            k: e for k, e in defined.items() if e.replicate is not None and not e.jackknife_only
        }
        replicates: dict[str, list[np.ndarray]] = {k: [] for k in resampled}
        for weights in intervals.resample_weights(rng, n_items, settings.bootstrap_resamples):
            for name, est in resampled.items():
                replicates[name].append(est.replicate(weights))  # type: ignore[misc]
        for name, e in defined.items():
            result[name] = (
                jackknife(name, e) if e.jackknife_only else (None, None, TOO_MANY_PATTERNS)
            )
        for name, values in replicates.items():
            low, high = value_range(name, k)
            result[name] = intervals.percentile(
                np.concatenate(values), level, n_items=n_items, floor=low, ceiling=high
            )
        return result

    return intervals.by_method(method, result, by_jackknife, by_bootstrap, rng)
