"""The per-rater change detector (auditor.alerting.change): evidence, CUSUM, restarts."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.alerting.change import (
    GROUP,
    REPEAT,
    ChangeSettings,
    Memory,
    RaterDetector,
    alarm,
    alternative,
    calibrate_limit,
    evidence,
    feed,
    restart,
    update,
)

SETTINGS = ChangeSettings(limit=10.0, baseline={REPEAT: 20, GROUP: 100})


def test_evidence_pairs_each_label_with_the_others_and_her_own_earlier_look():
    latest: Memory = {}
    chunks = list(
        evidence(
            [("i1", "ann", "a"), ("i1", "bob", "b"), ("i1", "cy", "a"), ("i1", "ann", "b")],
            latest,
        )
    )
    assert chunks == [
        ("bob", GROUP, 1, 1),  # bob meets ann's a
        ("ann", GROUP, 1, 1),  # ann's a, which met nobody, is read against bob's b
        ("cy", GROUP, 1, 2),  # cy's a meets ann's a and bob's b; theirs are read already
        ("ann", REPEAT, 1, 1),  # ann's second look differs from her first
        ("ann", GROUP, 1, 2),  # her new look against bob and cy
    ]
    assert latest == {
        "i1": {"ann": ("b", True, None), "bob": ("b", True, None), "cy": ("a", True, None)}
    }


def test_a_flagged_rater_is_left_out_of_the_others_evidence():
    chunks = list(
        evidence([("i", "bad", "x"), ("i", "ann", "y")], {}, flagged=lambda r: r == "bad")
    )
    assert chunks == []  # ann's only partner is flagged: no group evidence for either


def test_baseline_first_then_the_statistic_rises_on_disagreement():
    d = RaterDetector()
    for k in range(100):
        update(d, GROUP, int(k % 20 < 3), 1, SETTINGS)  # baseline: p0 ~ 0.15
    assert d.learned(SETTINGS, GROUP) and d.statistic == 0.0
    assert d.p0(GROUP) == pytest.approx(15.5 / 101)
    update(d, GROUP, 1, 2, SETTINGS)  # half of two partners: one observation, share 0.5
    assert d.tested == 1 and d.statistic > 0
    for _ in range(100):
        update(d, GROUP, 1, 2, SETTINGS)  # half disagree: far above p1
    assert d.statistic == pytest.approx(SETTINGS.cap * SETTINGS.limit)  # capped
    for _ in range(2000):
        update(d, GROUP, 0, 1, SETTINGS)
    assert d.statistic == 0.0  # back in control: the statistic washes out
    restart(d)
    assert not d.ready(SETTINGS) and d.restarts == 1


def test_state_round_trips_through_json_shape():
    d = RaterDetector(statistic=3.5, tested=7)
    update(d, REPEAT, 2, 30, SETTINGS)
    assert RaterDetector.from_dict(d.as_dict()) == d


def test_alternative_multiplies_the_odds():
    p1 = alternative(0.2, 2.0)
    assert p1 / (1 - p1) == pytest.approx(2 * 0.2 / 0.8)


def test_feed_keeps_stable_raters_quiet_and_catches_a_degrading_one():
    rng = np.random.default_rng(3)
    detectors: dict[str, RaterDetector] = {}
    latest: Memory = {}
    settings = ChangeSettings(limit=12.0)
    raters = [f"r{i}" for i in range(6)]
    peak = dict.fromkeys(raters, 0.0)

    def day(items: range, bad: float | None) -> None:
        rows = []
        for i in items:
            truth = rng.integers(4)
            for r in rng.choice(raters, size=3, replace=False):
                y = bad if (r == "r0" and bad is not None) else 0.9
                label = truth if rng.random() < y else rng.integers(4)
                rows.append((f"i{i}", str(r), str(label)))
        feed(detectors, rows, latest, settings)
        for r in raters:
            peak[r] = max(peak[r], detectors[r].statistic)

    for d in range(20):
        day(range(d * 400, d * 400 + 400), None)
    assert max(peak.values()) < settings.limit
    day(range(8000, 8300), 0.35)
    assert detectors["r0"].statistic >= settings.limit
    assert all(detectors[r].statistic < settings.limit for r in raters[1:])


def test_calibrated_limit_grows_with_the_target_run_length():
    short = calibrate_limit(0.15, 2.0, 200, runs=200, seed=1)
    long = calibrate_limit(0.15, 2.0, 2000, runs=200, seed=1)
    assert 2.0 <= short < long


def test_a_repeat_of_a_look_made_under_an_alarm_is_no_evidence():
    # ann looks at i0 (seq 0), her episode fires, she looks at i1 (seq 1) while it is open;
    # after she is retrained and restarted, her new looks at i0 and i1 would compare with
    # looks of the spell that raised the alarm: they are left out
    settings = ChangeSettings(limit=10.0, baseline={REPEAT: 1, GROUP: 1})
    ann = RaterDetector(statistic=12.0, base_n={REPEAT: 5, GROUP: 5})
    detectors = {"ann": ann}
    latest: Memory = {}
    feed(detectors, [("i0", "ann", "x", 0)], latest, settings)
    assert ann.stale_upto == -1  # over the limit is not an alarm yet
    alarm(ann)
    assert ann.stale_upto == 0
    feed(detectors, [("i1", "ann", "x", 1)], latest, settings)
    assert ann.stale_upto == 1
    restart(ann)
    feed(detectors, [("i2", "ann", "y", 2), ("i0", "ann", "z", 5)], latest, settings)
    assert ann.stale_upto == 1  # her episode is over: seq 2 is a reference
    feed(detectors, [("i1", "ann", "z", 3), ("i2", "ann", "y", 4)], latest, settings)
    assert ann.base_n[REPEAT] == 1 and ann.base_k[REPEAT] == 0  # only i2's pair was read
    assert RaterDetector.from_dict(ann.as_dict()) == ann


def test_the_baseline_can_be_read_standard_errors_high():
    d = RaterDetector(base_n={REPEAT: 0, GROUP: 99}, base_k={REPEAT: 0.0, GROUP: 14.5})
    p0 = d.p0(GROUP)
    assert p0 == pytest.approx(0.15)
    assert d.reference(GROUP, SETTINGS) == pytest.approx(p0)  # default: the point estimate
    one = ChangeSettings(limit=10.0, baseline_se=1.0)
    assert d.reference(GROUP, one) == pytest.approx(0.15 + (0.15 * 0.85 / 100) ** 0.5)
