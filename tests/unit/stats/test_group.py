"""S and kappa_VA against straightforward loop implementations of docs/measures.md ("Project
measures" and "Choices made where the sources are silent")."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.domain import ProjectSettings
from auditor.stats import compute_measures
from tests.unit.stats.helpers import NO_CI, from_matrix
from tests.unit.stats.test_peers import random_matrix


def biases(mat: np.ndarray, humans: list[int], k: int) -> np.ndarray:
    """v_pc over the group's pairable items (at least two humans)."""
    pairable = (mat[:, humans] >= 0).sum(axis=1) >= 2
    v = np.zeros((mat.shape[1], k))
    for p in humans:
        mine = pairable & (mat[:, p] >= 0)
        if mine.any():
            v[p] = np.bincount(mat[mine, p], minlength=k) / mine.sum()
    return v


def s_by_loops(mat: np.ndarray, candidate: int, group: list[int], v: np.ndarray, k: int):
    ao, amax, chance, given = [], [], [], []
    for u in range(mat.shape[0]):
        raters = [q for q in group if mat[u, q] >= 0]
        m = len(raters)
        if m < 2 or mat[u, candidate] < 0:
            continue
        c = np.bincount(mat[u, raters], minlength=k)
        pairs = m * (m - 1)
        ao.append(c[mat[u, candidate]] * (c[mat[u, candidate]] - 1) / pairs)
        amax.append(max(c * (c - 1)) / pairs)
        chance.append(
            [(v[raters, j].sum() ** 2 - (v[raters, j] ** 2).sum()) / pairs for j in range(k)]
        )
        given.append(mat[u, candidate])
    if not ao:
        return None
    r = np.bincount(given, minlength=k) / len(given)
    ae = float((r * np.mean(chance, axis=0)).sum())
    room = np.mean(amax) - ae
    return None if room <= 1e-12 else (np.mean(ao) - ae) / room


@pytest.mark.parametrize("seed", range(8))
def test_model_s_and_human_leave_one_out_s(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.25)
    while mat.shape[1] < 4:  # three humans and a model at least
        mat = np.column_stack([mat, mat[:, 0]])
    n_raters = mat.shape[1]
    model = n_raters - 1
    humans = list(range(n_raters - 1))
    v = biases(mat, humans, k)
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)], models=[model]), NO_CI)
    expected = s_by_loops(mat, model, humans, v, k)
    got = ms.models[0].s.value
    assert (got is None) == (expected is None)
    if got is not None:
        assert got == pytest.approx(expected, abs=1e-10)
    for p, result in zip(humans, ms.raters, strict=True):
        others = [q for q in humans if q != p]
        expected = s_by_loops(mat, p, others, v, k)
        got = result.s_vs_group.value
        assert (got is None) == (expected is None), (p, got, expected)
        if got is not None:
            assert got == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("seed", range(8))
def test_kappa_va_by_definition(seed: int) -> None:
    """Vanbelle and Albert (2009) unweighted, (docs/measures.md, "Project measures")."""
    mat, k = random_matrix(seed, missing=0.25)
    mat = np.column_stack([mat, np.random.default_rng(seed).integers(0, k, mat.shape[0])])
    model = mat.shape[1] - 1
    humans = list(range(model))
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)], models=[model]), NO_CI)
    rows = [u for u in range(mat.shape[0]) if (mat[u, humans] >= 0).sum() >= 2]
    p = np.array([np.bincount(mat[u, humans][mat[u, humans] >= 0], minlength=k) for u in rows])
    p = p / p.sum(axis=1, keepdims=True)
    y = np.eye(k)[mat[rows, model]]
    po = (y * p).sum(axis=1).mean()
    pe = (y.mean(axis=0) * p.mean(axis=0)).sum()
    pm = p.max(axis=1).mean()
    assert ms.models[0].kappa_va.value == pytest.approx((po - pe) / (pm - pe), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_leave_one_out_s_jackknife_equals_refits_with_fixed_biases(seed: int) -> None:
    mat, k = random_matrix(seed, missing=0.2)
    while mat.shape[1] < 4:
        mat = np.column_stack([mat, mat[:, 0]])
    humans = list(range(mat.shape[1]))
    v = biases(mat, humans, k)
    ms = compute_measures(from_matrix(mat, [str(c) for c in range(k)]), ProjectSettings())
    checked = 0
    for p, result in zip(humans, ms.raters, strict=True):
        others = [q for q in humans if q != p]
        used = [
            u for u in range(mat.shape[0]) if mat[u, p] >= 0 and (mat[u, others] >= 0).sum() >= 2
        ]
        refits = [s_by_loops(np.delete(mat, u, axis=0), p, others, v, k) for u in used]
        s = result.s_vs_group
        if s.value is None or any(r is None for r in refits) or len(refits) < 2:
            continue
        refits = np.array(refits)
        n = refits.shape[0]
        se = np.sqrt((n - 1) / n * ((refits - refits.mean()) ** 2).sum())
        assert (s.ci_high - s.ci_low) / 2 == pytest.approx(1.959963984540054 * se, rel=1e-9)
        assert s.interval_method == "jackknife"
        checked += 1
    assert checked > 0
