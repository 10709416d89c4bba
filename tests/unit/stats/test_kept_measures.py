"""The ``MeasureSet`` from the kept sums (issue 22): same shape as ``compute_measures``, every
part it does not name in ``missing`` equal to it (values to 1e-9, n's and reasons exactly)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.domain import (
    CollapsePolicy,
    IntervalMethod,
    LabelArrays,
    ProjectSettings,
    RaterModel,
    RhoMode,
    RhoUnrated,
    Scale,
)
from auditor.services.recompute.kept import Layout
from auditor.services.recompute.kept_verify import in_id_order
from auditor.stats import compute_measures, kept_pairs, kept_triples
from auditor.stats.bands import BandScale, band
from auditor.stats.kept import contributions, item_groups
from auditor.stats.kept_measures import NOT_KEPT, KeptMeasureSet, kept_measure_set
from auditor.stats.results import Measure, MeasureSet
from auditor.stats.synthetic import synthetic_project
from tests.unit.stats.test_properties import projects

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GROUPS = 7


def _kept(labels: LabelArrays, chosen: ProjectSettings, groups: int = GROUPS) -> KeptMeasureSet:
    group_of_item = item_groups(np.arange(labels.n_items), groups)
    state = contributions(labels, chosen.collapse, group_of_item, groups)
    names = labels.rater_names or tuple(str(i) for i in range(labels.n_raters))
    return kept_measure_set(
        state,
        rater_names=names,
        is_model=labels.rater_is_model,
        categories=tuple(labels.category_names),
        settings=chosen,
        n_labels=labels.n_labels,
        n_items=labels.n_items,
    )


def _same_rows(
    ours: tuple[tuple[float | None, ...], ...], theirs: tuple[tuple[float | None, ...], ...]
) -> None:
    """Two row-normalised confusion tables: the same shape and undefined rows, values to 1e-9."""
    assert len(ours) == len(theirs)
    for row_a, row_b in zip(ours, theirs, strict=True):
        assert len(row_a) == len(row_b)
        for a, b in zip(row_a, row_b, strict=True):
            assert (a is None) == (b is None), (ours, theirs)
            if a is not None and b is not None:
                assert abs(a - b) <= 1e-9, (ours, theirs)


def _on_an_edge(a: float, b: float) -> bool:
    """Two values within 1e-9 on either side of a band's edge (0.6 and 0.6 - 1e-16)."""
    return any(band(a, scale) != band(b, scale) for scale in BandScale)


def _same_measure(where: str, ours: Measure, theirs: Measure) -> None:
    assert ours.n == theirs.n, (where, ours, theirs)
    if theirs.value is None or ours.value is None:
        assert ours.value is None and theirs.value is None, (where, ours, theirs)
        assert ours.reason == theirs.reason, (where, ours.reason, theirs.reason)
    else:
        assert abs(ours.value - theirs.value) <= 1e-9, (where, ours.value, theirs.value)
        assert ours.band == theirs.band or _on_an_edge(ours.value, theirs.value), (
            where,
            ours.band,
            theirs.band,
        )
    assert ours.interval_level == theirs.interval_level or ours.value is None, where


def assert_equal_where_kept(kept: KeptMeasureSet, full: MeasureSet) -> None:
    ours, missing = kept.measures, set(kept.missing)
    for field in ("n_labels", "n_items", "n_raters", "n_pairable_items", "categories"):
        assert getattr(ours, field) == getattr(full, field), field
    for field in ("interval_method", "interval_level", "rater_model", "scale", "weights"):
        assert getattr(ours, field) == getattr(full, field), field
    assert list(ours.measures) == list(full.measures)
    for name, measure in full.measures.items():
        if f"measures.{name}" in missing:
            assert ours.measures[name].reason == NOT_KEPT
        else:
            _same_measure(name, ours.measures[name], measure)
    assert list(ours.by_category) == list(full.by_category)
    for name, per in full.by_category.items():
        assert list(ours.by_category[name]) == list(per)
        if f"by_category.{name}" not in missing:
            for category, measure in per.items():
                _same_measure(f"{name}:{category}", ours.by_category[name][category], measure)
    assert [r.rater for r in ours.raters] == [r.rater for r in full.raters]
    for mine, theirs in zip(ours.raters, full.raters, strict=True):
        assert mine.n_repeated_items == theirs.n_repeated_items
        assert mine.n_presentations == theirs.n_presentations
        for attribute in dataclasses.fields(theirs):
            name = attribute.name
            if name in ("rater", "n_repeated_items", "n_presentations"):
                continue
            a, b = getattr(mine, name), getattr(theirs, name)
            if f"raters.{name}" in missing:
                assert not isinstance(a, Measure) or a.reason == NOT_KEPT, name
            elif isinstance(b, Measure):
                _same_measure(f"{theirs.rater}.{name}", a, b)
            elif name == "confusion":
                _same_rows(a, b)
            else:
                assert a == b, (theirs.rater, name, a, b)
    if "models" in missing:
        assert ours.models == ()
    else:
        assert [m.rater for m in ours.models] == [m.rater for m in full.models]
        for mine_m, theirs_m in zip(ours.models, full.models, strict=True):
            _same_measure(f"{theirs_m.rater}.s", mine_m.s, theirs_m.s)
            _same_measure(f"{theirs_m.rater}.kappa_va", mine_m.kappa_va, theirs_m.kappa_va)
    if "pairwise_cohen" in missing:
        assert ours.pairwise_cohen == ()
    else:
        assert len(ours.pairwise_cohen) == len(full.pairwise_cohen)
        for pair, their_pair in zip(ours.pairwise_cohen, full.pairwise_cohen, strict=True):
            where = f"{their_pair.rater_a}|{their_pair.rater_b}"
            assert (pair.rater_a, pair.rater_b, pair.n_items) == (
                their_pair.rater_a,
                their_pair.rater_b,
                their_pair.n_items,
            )
            _same_measure(where, pair.kappa, their_pair.kappa)
            assert (pair.cohen_w is None) == (their_pair.cohen_w is None), where
            if pair.cohen_w is not None and their_pair.cohen_w is not None:
                _same_measure(f"{where} w", pair.cohen_w, their_pair.cohen_w)
    spread_a, spread_b = ours.self_agreement_spread, full.self_agreement_spread
    assert (spread_a is None) == (spread_b is None)
    if spread_a is not None and spread_b is not None:
        assert abs(spread_a - spread_b) <= 1e-9


@st.composite
def _with_models(draw: st.DrawFn) -> LabelArrays:
    labels = draw(projects())
    flags = draw(st.lists(st.booleans(), min_size=labels.n_raters, max_size=labels.n_raters))
    return dataclasses.replace(labels, rater_is_model=np.array(flags, dtype=bool))


@SETTINGS
@given(
    _with_models(),
    st.sampled_from(list(CollapsePolicy)),
    st.sampled_from([IntervalMethod.NONE, IntervalMethod.JACKKNIFE]),
    st.sampled_from(list(Scale)),
    st.sampled_from(list(RhoMode)),
    st.sampled_from(list(RhoUnrated)),
    st.sampled_from(list(RaterModel)),
)
def test_kept_measure_set_equals_compute_measures_where_kept(
    labels: LabelArrays,
    policy: CollapsePolicy,
    method: IntervalMethod,
    scale: Scale,
    mode: RhoMode,
    unrated: RhoUnrated,
    rater_model: RaterModel,
) -> None:
    chosen = ProjectSettings(
        collapse=policy,
        interval_method=method,
        scale=scale,
        rho_mode=mode,
        rho_unrated=unrated,
        rater_model=rater_model,
    )
    kept = _kept(labels, chosen)
    assert_equal_where_kept(kept, compute_measures(labels, chosen))


def test_what_is_missing_is_named() -> None:
    """A project with a model rater on an ordinal scale: the parts not kept yet are listed,
    and with the bootstrap so is every part with an interval."""
    labels = synthetic_project(300, 5, n_models=1, repeat_share=0.1, seed=4)
    ordinal = ProjectSettings(scale=Scale.ORDINAL)
    kept = _kept(labels, ordinal, 20)
    assert "models" not in kept.missing and "pairwise_cohen" not in kept.missing
    assert kept.missing == ()  # with the default settings everything is kept
    assert "measures.kappa_s_w" not in kept.missing and "measures.alpha_ordinal" not in kept.missing
    for part in ("raters.s_vs_group", "raters.confusion", "raters.grade_bias"):
        assert part not in kept.missing, part
    assert "measures.kappa_s" not in kept.missing and "measures.rho" not in kept.missing
    assert kept.measures.notes == ("intervals: delete-a-group jackknife over 20 item groups",)
    assert_equal_where_kept(kept, compute_measures(labels, ordinal))
    boot = _kept(labels, ProjectSettings(interval_method=IntervalMethod.BOOTSTRAP), 20)
    assert "measures.kappa_s" in boot.missing and "by_category.category_share" in boot.missing
    assert "raters.self_agreement" in boot.missing and "pairwise_cohen" in boot.missing
    assert "models" in boot.missing


def test_kept_intervals_hold_the_estimates() -> None:
    labels = synthetic_project(2000, 5, repeat_share=0.1, seed=1)
    kept = _kept(labels, ProjectSettings(), 20).measures
    for name in ("kappa_s", "fleiss_kappa", "rho", "mean_self_agreement", "bias_index"):
        m = kept.measures[name]
        assert m.value is not None and m.ci_low is not None and m.ci_high is not None, name
        assert m.ci_low < m.value <= m.ci_high, name
        assert m.interval_method == IntervalMethod.JACKKNIFE
    for rater in kept.raters:
        sa = rater.self_agreement
        assert sa.value is not None and sa.ci_low is not None and sa.ci_high is not None
        assert sa.ci_low <= sa.value <= sa.ci_high
        s = rater.s_vs_group
        assert s.value is not None and s.ci_low is not None and s.ci_high is not None
        assert s.ci_low < s.value <= s.ci_high
        assert s.interval_method == IntervalMethod.JACKKNIFE


def test_sparse_and_dense_sums_of_the_tables_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``DENSE_CELLS`` (more than 128 raters) the triple, pair and model-pair tables are
    summed by sorting keys: the same tables as the dense bincount of small projects."""
    labels = synthetic_project(200, 6, n_models=2, repeat_share=0.1, seed=7)
    groups = item_groups(np.arange(labels.n_items), 5)
    dense = contributions(labels, CollapsePolicy.FIRST, groups, 5)
    monkeypatch.setattr(kept_triples, "DENSE_CELLS", 0)
    monkeypatch.setattr(kept_pairs, "DENSE_CELLS", 0)
    sparse = contributions(labels, CollapsePolicy.FIRST, groups, 5)
    assert dense.triple_key.size and dense.pair_key.size and dense.model_pair_key.size
    for name, value in dense.arrays().items():
        assert np.array_equal(value.shape, getattr(sparse, name).shape), name
        assert np.allclose(value, getattr(sparse, name), atol=1e-12), name


@SETTINGS
@given(_with_models(), st.randoms())
def test_renumbering_the_slots_gives_the_state_in_id_order(labels: LabelArrays, random) -> None:
    """A state whose slots are in another order (raters that arrived out of id order), put
    back in id order by ``kept_verify.in_id_order``, equals the state built in id order: the
    sparse tables' keys, pair orientations and signs follow."""
    r = labels.n_raters
    perm = np.array(random.sample(range(r), r))  # rater p sits in slot perm[p]
    groups = item_groups(np.arange(labels.n_items), GROUPS)
    arrived = contributions(labels, CollapsePolicy.FIRST, groups, GROUPS, perm, r)
    ids = [int(p) for p in np.argsort(perm)]  # the rater in each slot
    layout = Layout("first", list(range(labels.n_categories)), GROUPS, ids, [])
    reordered, order = in_id_order(arrived, layout)
    assert order == sorted(ids)
    expected = contributions(labels, CollapsePolicy.FIRST, groups, GROUPS)
    for name, value in expected.arrays().items():
        got = getattr(reordered, name)
        assert got.shape == value.shape, name
        assert np.allclose(got, value, atol=1e-12), name
