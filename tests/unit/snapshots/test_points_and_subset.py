from collections import Counter
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.domain import LabelArrays, to_micros
from auditor.snapshots.points import parse_subject, points_from_stats_dict
from auditor.snapshots.scopes import Window
from auditor.snapshots.subset import subset_labels, window_mask


def m(value, n=3, reason=None, lo=None, hi=None):
    return {"value": value, "ci_low": lo, "ci_high": hi, "n": n, "band": None, "reason": reason}


RENDERED = {
    "n_labels": 9,
    "n_items": 3,
    "n_raters": 3,
    "n_pairable_items": 3,
    "categories": ["a", "b"],
    "measures": {"kappa_s": m(0.5, lo=0.2, hi=0.8), "rho": m(None, 0, "no repeated presentations")},
    "raters": {"r1": {"self_agreement": m(0.9, 4), "s_vs_group": m(0.4), "n_repeated_items": 4}},
    "models": {"clf": {"s": m(0.7), "kappa_va": m(0.6)}},
    "pairwise_cohen": [{"rater_a": "r1", "rater_b": "r2", "kappa": m(0.3, n=2), "n_items": 2}],
}


def test_points_cover_every_measure_and_keep_undefined_as_null_with_reason():
    points = {(p.metric, p.subject_kind, p.subject_id): p for p in points_from_stats_dict(RENDERED)}
    assert set(points) == {
        ("kappa_s", "project", ""),
        ("rho", "project", ""),
        ("self_agreement", "rater", "r1"),
        ("s_vs_group", "rater", "r1"),
        ("s", "model", "clf"),
        ("kappa_va", "model", "clf"),
        ("cohen_kappa", "pair", "r1|r2"),
    }
    assert points[("kappa_s", "project", "")].ci_low == 0.2
    rho = points[("rho", "project", "")]
    assert rho.value is None and rho.reason == "no repeated presentations"
    assert points[("cohen_kappa", "pair", "r1|r2")].n == 2


def test_nan_is_refused():
    bad = {"measures": {"kappa_s": m(float("nan"))}}
    with pytest.raises(ValueError, match="kappa_s"):
        points_from_stats_dict(bad)


def test_parse_subject():
    assert parse_subject(None) == ("project", "")
    assert parse_subject("rater:r 1") == ("rater", "r 1")
    assert parse_subject("pair:a|b") == ("pair", "a|b")
    for bad in ("rater", "rater:", "person:x"):
        with pytest.raises(ValueError, match="subject must be"):
            parse_subject(bad)


@st.composite
def label_arrays(draw):
    n = draw(st.integers(0, 60))
    n_items, n_raters = draw(st.integers(1, 8)), draw(st.integers(1, 5))
    ints = st.lists(st.integers(0, 10**6), min_size=n, max_size=n)
    return LabelArrays(
        item=np.array(draw(st.lists(st.integers(0, n_items - 1), min_size=n, max_size=n)), int),
        rater=np.array(draw(st.lists(st.integers(0, n_raters - 1), min_size=n, max_size=n)), int),
        category=np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), int),
        order=np.array(draw(ints), dtype=np.int64),
        rater_is_model=np.array([r == n_raters - 1 for r in range(n_raters)]),
        category_names=("a", "b", "c"),
        rater_names=tuple(f"r{r}" for r in range(n_raters)),
        item_names=tuple(f"i{i}" for i in range(n_items)),
        label_ids=np.arange(n, dtype=np.int64),
    )


def _named(labels):
    return Counter(
        (labels.item_names[i], labels.rater_names[r], labels.category_names[c], int(o))
        for i, r, c, o in zip(labels.item, labels.rater, labels.category, labels.order, strict=True)
    )


@settings(max_examples=60)
@given(label_arrays(), st.integers(0, 10**6), st.integers(0, 10**6))
def test_subset_keeps_exactly_the_window_and_reindexes_densely(labels, a, b):
    lo, hi = min(a, b), max(a, b)
    window = Window(datetime.fromtimestamp(lo / 1e6, UTC), datetime.fromtimestamp(hi / 1e6, UTC))
    lo_us, hi_us = to_micros(window.start), to_micros(window.end)
    sub = subset_labels(labels, window_mask(labels.order, window))
    expected = Counter({k: v for k, v in _named(labels).items() if lo_us <= k[3] <= hi_us})
    assert _named(sub) == expected
    assert set(sub.item.tolist()) == set(range(len(sub.item_names)))
    assert set(sub.rater.tolist()) == set(range(sub.n_raters))
    # kinds travel with the raters
    for r, name in enumerate(sub.rater_names):
        assert sub.rater_is_model[r] == labels.rater_is_model[labels.rater_names.index(name)]
    assert np.all(np.diff(sub.label_ids) > 0)


def test_cumulative_window_is_the_same_object():
    labels = LabelArrays(
        item=np.zeros(1, int),
        rater=np.zeros(1, int),
        category=np.zeros(1, int),
        order=np.zeros(1, np.int64),
        rater_is_model=np.zeros(1, bool),
        category_names=("a",),
    )
    assert subset_labels(labels, window_mask(labels.order, Window(None, None))) is labels


@pytest.mark.parametrize(
    ("rendered", "named"),
    [
        ({"measures": {"x": {"estimate": 0.5}}}, "'x'"),
        ({"measures": {"kappa_s": {"estimate": 0.5}}}, "'kappa_s' is not a measure"),
        ({"raters": {"r1": {"self_agreemnt": m(0.5)}}}, "'self_agreemnt'"),
        ({"models": {"clf": {"kappa_s": m(0.5)}}}, "'kappa_s'"),
        ({"measures": {"kappa_s": {**m(0.5), "stderr": 0.1}}}, "'stderr'"),
    ],
)
def test_an_entry_the_statistics_do_not_define_is_an_error_not_a_missing_point(rendered, named):
    with pytest.raises(ValueError, match=named):
        points_from_stats_dict(rendered)
