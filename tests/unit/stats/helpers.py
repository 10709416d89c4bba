"""Small builders of ``LabelArrays`` for the statistics tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings

NO_CI = ProjectSettings(interval_method=IntervalMethod.NONE)


def from_matrix(
    matrix: Sequence[Sequence[int]] | np.ndarray,
    categories: Sequence[str],
    models: Sequence[int] = (),
    names: Sequence[str] = (),
) -> LabelArrays:
    """Items x raters matrix of category indices, -1 where a rater did not label the item."""
    mat = np.asarray(matrix, dtype=np.int64)
    item, rater = np.nonzero(mat >= 0)
    return LabelArrays(
        item=item.astype(np.int64),
        rater=rater.astype(np.int64),
        category=mat[item, rater],
        order=np.arange(item.shape[0], dtype=np.int64),
        rater_is_model=np.isin(np.arange(mat.shape[1]), list(models)),
        category_names=tuple(categories),
        rater_names=tuple(names),
        item_names=tuple(f"i{u}" for u in range(mat.shape[0])),
    )


def from_rows(
    rows: Sequence[tuple[int, int, int]],
    n_raters: int,
    categories: Sequence[str],
    models: Sequence[int] = (),
    order: Sequence[int] | None = None,
) -> LabelArrays:
    """Long rows (item, rater, category); ``order`` defaults to the row number."""
    arr = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    return LabelArrays(
        item=arr[:, 0].copy(),
        rater=arr[:, 1].copy(),
        category=arr[:, 2].copy(),
        order=np.asarray(order if order is not None else range(arr.shape[0]), dtype=np.int64),
        rater_is_model=np.isin(np.arange(n_raters), list(models)),
        category_names=tuple(categories),
    )


def values(ms: object) -> dict[str, float | None]:
    """The nine project measures' values of a ``MeasureSet``."""
    return {name: m.value for name, m in ms.measures.items()}  # type: ignore[attr-defined]


def rater_model_project(
    n_items: int,
    x: Sequence[float],
    prevalence: Sequence[float],
    looks: int,
    repeat_share: float,
    seed: int,
) -> LabelArrays:
    """A complete project drawn from the rater model (docs/measures.md, "Version 2") with known x.

    Each item has a genuine reading c* ~ P. Every rater labels every item; a share
    ``repeat_share`` of (item, rater) cells gets ``looks`` looks in all. Each look is, with
    chance x_p, a random choice drawn from P, otherwise c*. Written apart from
    ``auditor.stats.synthetic`` so that the estimators are checked against an independent draw.
    """
    rng = np.random.default_rng(seed)
    p = np.asarray(prevalence, dtype=float)
    k, n_raters = p.shape[0], len(x)
    truth = rng.choice(k, size=n_items, p=p)
    item, rater = (a.ravel() for a in np.meshgrid(np.arange(n_items), np.arange(n_raters)))
    shown = np.where(rng.random(item.shape[0]) < repeat_share, looks, 1)
    item, rater = np.repeat(item, shown), np.repeat(rater, shown)
    random = rng.random(item.shape[0]) < np.asarray(x, dtype=float)[rater]
    category = np.where(random, rng.choice(k, size=item.shape[0], p=p), truth[item])
    return LabelArrays(
        item=item.astype(np.int64),
        rater=rater.astype(np.int64),
        category=category.astype(np.int64),
        order=rng.permutation(item.shape[0]).astype(np.int64),
        rater_is_model=np.zeros(n_raters, bool),
        category_names=tuple(f"c{c}" for c in range(k)),
    )


def true_rho(x: Sequence[float]) -> float:
    """Mean over rater pairs of (1 - x_i)(1 - x_j): both raters answer genuinely."""
    y = 1.0 - np.asarray(x, dtype=float)
    return float(((y.sum() ** 2 - (y**2).sum()) / 2) / (len(y) * (len(y) - 1) / 2))
