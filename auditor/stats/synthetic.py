"""Seeded synthetic projects for benchmarks, demos and tests.

Each item has a true category drawn from ``prevalence``. A rater follows the rater model of
docs/measures.md, "Version 2": with probability ``reliability`` (Y = 1 - x) it reports the
true category (a peaked choice), otherwise it picks at random by ``prevalence`` (x). Some
(item, rater) slots are missing; some are presented again (a repeated presentation, labeled
independently by the same process, later in time). A rater's reliability can change at a
given moment, to test drift alerts. Model raters label every item and never join the group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from auditor.domain import LabelArrays

MICROSECONDS_PER_DAY = 86_400_000_000
START = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds


@dataclass(frozen=True)
class Drift:
    """Rater ``rater`` labels with ``reliability`` from ``at_day`` (days after the start) on."""

    rater: int
    at_day: float
    reliability: float


def items_for(n_labels: int, n_raters: int, missing: float, repeat_share: float) -> int:
    """How many items give about ``n_labels`` labels with these settings."""
    per_item = n_raters * (1.0 - missing) * (1.0 + repeat_share)
    return max(1, round(n_labels / per_item))


def _labels(
    rng: np.random.Generator,
    truth: np.ndarray,
    reliable: np.ndarray,
    prevalence: np.ndarray,
) -> np.ndarray:
    """True category where a uniform draw falls under ``reliable``, else a chance pick."""
    chance = rng.choice(prevalence.shape[0], size=truth.shape[0], p=prevalence)
    return np.where(rng.random(truth.shape[0]) < reliable, truth, chance)


def synthetic_project(
    n_items: int,
    n_raters: int,
    *,
    n_categories: int = 4,
    missing: float = 0.2,
    repeat_share: float = 0.02,
    presentations: int = 2,
    reliability: float | Sequence[float] = 0.8,
    prevalence: Sequence[float] | None = None,
    n_models: int = 0,
    model_reliability: float | Sequence[float] = 0.7,
    days: float = 30.0,
    drift: Drift | None = None,
    seed: int = 0,
) -> LabelArrays:
    """A project of ``n_items`` items and ``n_raters`` human raters as ``LabelArrays``.

    Parameters
    ----------
    missing : share of (item, human rater) slots left unlabeled.
    repeat_share : share of labeled slots presented again.
    presentations : how many times a repeated slot is shown in all (>= 2).
    reliability : per human rater (or one value for all), the chance of a peaked choice, 1 - x.
    prevalence : category shares (K,); uniform by default.
    n_models, model_reliability : model raters, who label every item once.
    days : labels are spread uniformly over this many days; ``drift`` changes one rater then.
    seed : everything is a function of the seed.

    Rows come in time order (as ingestion would store them); ``order`` is in microseconds.
    """
    if n_items < 1 or n_raters < 1 or n_categories < 2:
        raise ValueError("need n_items >= 1, n_raters >= 1 and n_categories >= 2")
    if not (0.0 <= missing < 1.0 and 0.0 <= repeat_share <= 1.0):
        raise ValueError("missing must be in [0, 1) and repeat_share in [0, 1]")
    if presentations < 2:
        raise ValueError(f"presentations must be >= 2, got {presentations}")
    rng = np.random.default_rng(seed)
    shares = (
        np.full(n_categories, 1.0 / n_categories)
        if prevalence is None
        else np.asarray(prevalence, dtype=float)
    )
    if shares.shape != (n_categories,) or (shares < 0).any() or abs(shares.sum() - 1) > 1e-9:
        raise ValueError(f"prevalence must be {n_categories} non-negative shares summing to 1")
    human = np.broadcast_to(np.asarray(reliability, dtype=float), (n_raters,))
    models = np.broadcast_to(np.asarray(model_reliability, dtype=float), (n_models,))
    truth = rng.choice(n_categories, size=n_items, p=shares)

    slots = rng.random((n_items, n_raters)) >= missing
    item, rater = np.nonzero(slots)
    again = rng.random(item.shape[0]) < repeat_share
    item = np.concatenate([item, item[again], np.repeat(np.arange(n_items), n_models)])
    rater = np.concatenate(
        [rater, rater[again], np.tile(np.arange(n_raters, n_raters + n_models), n_items)]
    )
    span = days * MICROSECONDS_PER_DAY
    order = rng.integers(0, int(span), size=item.shape[0], dtype=np.int64)
    first = item.shape[0] - int(again.sum()) - n_items * n_models
    repeated = slice(first, first + int(again.sum()))
    # a repeat comes after the first look: move it into the later part of the span
    order[repeated] = np.maximum(order[repeated], order[:first][again])
    order[repeated] += rng.integers(1, max(2, int(span) // 10), size=int(again.sum()))
    reliable = np.concatenate([human, models])[rater]
    if drift is not None:
        if not 0 <= drift.rater < n_raters:
            raise ValueError(f"drift.rater must be a human rater index, got {drift.rater}")
        changed = (rater == drift.rater) & (order >= drift.at_day * MICROSECONDS_PER_DAY)
        reliable = np.where(changed, drift.reliability, reliable)
    category = _labels(rng, truth[item], reliable, shares)
    by_time = np.argsort(order, kind="stable")
    return LabelArrays(
        item=item[by_time].astype(np.int64),
        rater=rater[by_time].astype(np.int64),
        category=category[by_time].astype(np.int64),
        order=order[by_time] + START,
        rater_is_model=np.arange(n_raters + n_models) >= n_raters,
        category_names=tuple(f"c{c}" for c in range(n_categories)),
        rater_names=tuple(f"r{r:02d}" for r in range(n_raters))
        + tuple(f"m{t}" for t in range(n_models)),
        item_names=(),
    )
