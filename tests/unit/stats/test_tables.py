"""Reshaping: collapse policies and their ties, repeats, validation with precise messages."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from auditor.domain import CollapsePolicy, LabelArrays
from auditor.stats import compute_measures, tables
from tests.unit.stats.helpers import NO_CI, from_rows

CATS = ["a", "b", "c"]
# (item, rater, category); order given separately so ties can be arranged
ROWS = [(0, 0, 2), (0, 0, 1), (0, 0, 1), (0, 1, 0), (1, 0, 0), (1, 0, 2), (0, 0, 0)]
ORDER = [30, 10, 20, 5, 7, 7, 40]


def collapsed(policy: CollapsePolicy, rows=ROWS, order=ORDER) -> dict[tuple[int, int], int]:
    cells = tables.collapse(from_rows(rows, 2, CATS, order=order), policy)
    return {
        (int(i), int(r)): int(c)
        for i, r, c in zip(cells.item, cells.rater, cells.category, strict=True)
    }


def test_first_takes_earliest_and_breaks_ties_by_row() -> None:
    # item 0 rater 0: orders 30 (c), 10 (b), 20 (b), 40 (a) -> earliest is b
    # item 1 rater 0: orders 7 (a), 7 (c) tie -> the earlier row, a
    assert collapsed(CollapsePolicy.FIRST) == {(0, 0): 1, (0, 1): 0, (1, 0): 0}


def test_latest_takes_latest_and_breaks_ties_by_later_row() -> None:
    assert collapsed(CollapsePolicy.LATEST) == {(0, 0): 0, (0, 1): 0, (1, 0): 2}


def test_mode_takes_most_frequent_and_ties_go_to_the_earliest() -> None:
    # item 0 rater 0: b twice -> b; item 1 rater 0: a and c once each, same time -> row order: a
    assert collapsed(CollapsePolicy.MODE) == {(0, 0): 1, (0, 1): 0, (1, 0): 0}
    # a tie broken by time, not by row or category index: c seen at 1, a at 2, then a, c
    rows = [(0, 0, 0), (0, 0, 2), (0, 0, 0), (0, 0, 2)]
    assert collapsed(CollapsePolicy.MODE, rows, [2, 1, 3, 4]) == {(0, 0): 2}


def test_repeats_counts_every_presentation() -> None:
    cells = tables.collapse(from_rows(ROWS, 2, CATS, order=ORDER))
    got = {
        (int(cells.item[p]), int(cells.rater[p])): counts.tolist()
        for p, counts in zip(cells.repeat_cell, cells.repeat_counts, strict=True)
    }
    assert got == {(0, 0): [1, 2, 1], (1, 0): [1, 0, 1]}


def test_sparse_and_dense_cell_numbering_agree() -> None:
    rng = np.random.default_rng(0)
    n = 400
    rows = np.column_stack([rng.integers(0, 50, n), rng.integers(0, 6, n), rng.integers(0, 3, n)])
    labels = from_rows(rows.tolist(), 6, CATS, order=rng.integers(0, 100, n).tolist())
    # many unlabeled items make the (item, rater) space sparse: the sort-based numbering
    sparse = dataclasses.replace(labels, item=labels.item * 1000)
    for policy in CollapsePolicy:
        dense_cells = tables.collapse(labels, policy)
        sparse_cells = tables.collapse(sparse, policy)
        np.testing.assert_array_equal(dense_cells.item * 1000, sparse_cells.item)
        np.testing.assert_array_equal(dense_cells.category, sparse_cells.category)
        np.testing.assert_array_equal(dense_cells.repeat_counts, sparse_cells.repeat_counts)
        np.testing.assert_array_equal(dense_cells.repeat_cell, sparse_cells.repeat_cell)


def base() -> LabelArrays:
    return from_rows([(0, 0, 0), (0, 1, 1), (1, 0, 1)], 2, ["x", "y"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"category_names": ("x",)}, "at least 2 categories are needed, got 1"),
        ({"rater": np.array([0, 1])}, "rater has 2 rows, item has 3: lengths must match"),
        ({"order": np.array([0, 1])}, "order has 2 rows, item has 3: lengths must match"),
        ({"item": np.array([0, -1, 1])}, "item index must be >= 0: row 1 has -1"),
        ({"rater": np.array([0, 2, 0])}, r"rater index out of range \[0, 2\): row 1 has 2"),
        ({"category": np.array([0, 1, 5])}, r"category index out of range \[0, 2\): row 2 has 5"),
        ({"category": np.array([0, -3, 1])}, "category index must be >= 0: row 1 has -3"),
        ({"item_names": ("only",)}, r"item index out of range \[0, 1\): row 2 has 1"),
        ({"category": np.array([0.0, 1.0, 1.0])}, "category must have an integer dtype"),
        ({"rater_names": ("one",)}, "rater_names has 1 names for 2 raters"),
        ({"rater_is_model": np.array([0, 1])}, "rater_is_model must be a 1-D bool array"),
    ],
)
def test_invalid_input_raises_a_precise_value_error(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compute_measures(dataclasses.replace(base(), **change), NO_CI)


def test_empty_project_is_undefined_not_an_error() -> None:
    empty = from_rows([], 2, ["x", "y"])
    ms = compute_measures(empty, NO_CI)
    assert ms.n_labels == 0 and ms.n_pairable_items == 0
    for name, m in ms.measures.items():
        assert m.value is None and m.reason, name
    assert ms.pairwise_cohen == ()
