"""The per-rater S jackknife (``group.against_group``) works on all labels at once from lookup
tables; here it is checked against the direct form, one rater at a time with the label's K
chance terms materialised, on the dense (presence matrix) and the row-by-row path and across
label chunks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from auditor.stats import group, intervals, kappa, tables
from auditor.stats.synthetic import synthetic_project


def direct(table: tables.GroupTable, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Delete-one S per rater from its totals minus each label's features (the definition)."""
    bias = table.rater_bias()
    summed, squares = kappa.rater_sums(table, bias)
    n_raters, k = bias.shape
    m = table.m
    low, high = np.full(n_raters, np.nan), np.full(n_raters, np.nan)
    pairs_left = np.maximum((m - 1) * (m - 2), 1).astype(float)
    for p in range(n_raters):
        mine = np.flatnonzero((table.label_rater == p) & (m[table.label_item] >= 3))
        if mine.shape[0] < 2:
            continue
        item, given = table.label_item[mine], table.label_category[mine]
        counts = table.counts[item].copy()
        counts[np.arange(mine.shape[0]), given] -= 1  # the group without p
        ao = counts[np.arange(mine.shape[0]), given] * (counts[np.arange(mine.shape[0]), given] - 1)
        ao = ao / pairs_left[item]
        amax = (counts * (counts - 1)).max(axis=1) / pairs_left[item]
        chance = ((summed[item] - bias[p]) ** 2 - (squares[item] - bias[p] ** 2)) / pairs_left[
            item
        ][:, None]
        onehot = np.eye(k)[given]
        features = np.column_stack([np.ones(mine.shape[0]), ao, amax, onehot, chance])
        totals = features.sum(axis=0)
        estimate = float(group._s_of_totals(totals, k))
        if not np.isfinite(estimate):
            continue
        values = group._s_of_totals(totals - features, k)
        interval = intervals.jackknife(estimate, values, level)
        if interval[0] is not None:
            low[p], high[p] = interval[0], interval[1]
    return low, high


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("path", ["dense", "rows", "chunks"])
def test_against_group_intervals_equal_the_direct_form(
    seed: int, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = synthetic_project(
        300 + 50 * seed, 4 + seed, missing=0.1 * seed, repeat_share=0.05, seed=seed
    )
    if path == "rows":
        monkeypatch.setattr(tables, "PRESENCE_OCCUPANCY", 0)
    if path == "chunks":
        monkeypatch.setattr(group, "LABEL_CHUNK", 97)
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    assert (table.presence is None) == (path == "rows")
    bias = table.rater_bias()
    summed, squares = kappa.rater_sums(table, bias)
    got = group.against_group(table, bias, summed, squares, 0.9)
    want_low, want_high = direct(table, 0.9)
    assert np.isfinite(want_low).sum() >= 3
    assert np.array_equal(np.isnan(got.low), np.isnan(want_low))
    assert np.allclose(got.low, want_low, rtol=0, atol=1e-12, equal_nan=True)
    assert np.allclose(got.high, want_high, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 97, 1 << 16])
def test_label_chunks_cover_the_labels_once_from_item_starts(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = synthetic_project(120, 6, missing=0.4, repeat_share=0.0, seed=3)
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    monkeypatch.setattr(group, "LABEL_CHUNK", chunk)
    chunks = group._label_chunks(table)
    n_labels = table.label_item.shape[0]
    assert chunks[0][0] == 0 and chunks[-1][1] == n_labels
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
    assert all(first in set(table.starts.tolist()) for first, _ in chunks)
    assert all(last > first for first, last in chunks)
