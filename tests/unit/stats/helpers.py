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
