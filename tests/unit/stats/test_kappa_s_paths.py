"""The kappa_S jackknife has a dense-block path and a within-item-pairs path (chosen by how
many raters an item carries); both must give the same leave-one-out values. The same for
the rater sums of the group table (dense presence product or bincounts)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

from auditor.domain import LabelArrays
from auditor.stats import kappa_s, tables
from auditor.stats.synthetic import synthetic_project
from tests.unit.stats.test_properties import projects


def _both(table: tables.GroupTable, monkeypatch: pytest.MonkeyPatch) -> tuple:
    with monkeypatch.context() as patch:
        patch.setattr(kappa_s, "DENSE_OCCUPANCY", 1 << 30)
        dense = kappa_s.leave_one_out(table)
    with monkeypatch.context() as patch:
        patch.setattr(kappa_s, "DENSE_OCCUPANCY", 0)
        pairs = kappa_s.leave_one_out(table)
    return dense, pairs


@settings(max_examples=40, deadline=None)
@given(projects())
def test_dense_and_pair_paths_agree(labels: LabelArrays) -> None:
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    assume(table.n_pairable >= 2)  # not `return`: a skipped example must not count as a pass
    with pytest.MonkeyPatch.context() as monkeypatch:
        dense, pairs = _both(table, monkeypatch)
    assert np.array_equal(np.isnan(dense), np.isnan(pairs))
    assert np.allclose(dense, pairs, rtol=0, atol=1e-12, equal_nan=True)


def test_paths_agree_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    labels = synthetic_project(3000, 12, missing=0.6, seed=4)
    table = tables.group_table(tables.collapse(labels), labels.rater_is_model)
    monkeypatch.setattr(kappa_s, "DENSE_CHUNK_CELLS", 500)  # many item chunks
    dense, pairs = _both(table, monkeypatch)
    assert np.isfinite(dense).all()
    assert np.allclose(dense, pairs, rtol=0, atol=1e-12)


def test_sparse_rater_sums_equal_the_dense_product(monkeypatch: pytest.MonkeyPatch) -> None:
    labels = synthetic_project(2000, 8, missing=0.5, seed=6)
    cells = tables.collapse(labels)
    per_rater = np.random.default_rng(1).random((labels.n_raters, 3))
    dense = tables.group_table(cells, labels.rater_is_model)
    assert dense.presence is not None
    monkeypatch.setattr(tables, "PRESENCE_OCCUPANCY", 0)
    sparse = tables.group_table(cells, labels.rater_is_model)
    assert sparse.presence is None
    assert np.allclose(sparse.sum_over_raters(per_rater), dense.sum_over_raters(per_rater))
    per_item = np.random.default_rng(2).random((dense.n_pairable, 3))
    assert np.allclose(sparse.sum_over_items(per_item), dense.sum_over_items(per_item))
