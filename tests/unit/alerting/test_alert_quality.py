"""Issue 21: each mechanism that keeps the default rules from alarming on what is not yet
known, on noise or on correlated windows; each case fired under the rules before the issue."""

from __future__ import annotations

from datetime import timedelta

import pytest

from auditor.alerting import (
    AlertState,
    AlertStatus,
    Observation,
    Subject,
    SubjectKind,
    Verdict,
    default_rules,
    judge,
    step,
)
from auditor.alerting.judgement import drop_z
from tests.unit.alerting.support import T0

RULES = {r.id.rsplit(":", 1)[-1]: r for r in default_rules("p")}


def test_day_one_interval_is_not_yet_known():
    # the demo's first snapshot: kappa_S 0.686 on 46 pairable items, [0.508, 0.864]; the old
    # rule (ci_low < 0.667, min_n 10) fired on it, though the level is simply not known yet
    first = Observation(0.686, 0.508, 0.864, n=46)
    assert judge(first, RULES["kappa_s"]).verdict is Verdict.INSUFFICIENT
    # enough items but an interval wider than the margin holding 0.667: still not known
    wide = Observation(0.70, 0.62, 0.78, n=500)
    judged = judge(wide, RULES["kappa_s"])
    assert judged.verdict is Verdict.INSUFFICIENT
    assert "not yet known" in judged.reason
    # a narrow interval above is clear; one wholly below is a breach, however wide
    assert judge(Observation(0.72, 0.695, 0.745, n=900), RULES["kappa_s"]).verdict is Verdict.CLEAR
    assert judge(Observation(0.45, 0.30, 0.60, n=200), RULES["kappa_s"]).verdict is Verdict.BREACH
    # rho's gate reads the repeated items it rests on (the service passes them as n): the
    # demo's day-2 rho, 0.607 [0.318, 0.897], rested on 29 repeats
    assert (
        judge(Observation(0.607, 0.318, 0.897, n=29), RULES["rho"]).verdict is Verdict.INSUFFICIENT
    )


def test_lookback_on_few_repeats_is_insufficient():
    # this week 0.62 on 90 repeats, a week ago 0.95 on 15: min_n applies to both sides
    obs = Observation(0.62, n=90, lookback_value=0.95, lookback_n=15)
    judged = judge(obs, RULES["self_agreement_drop"])
    assert judged.verdict is Verdict.INSUFFICIENT
    assert "n=15 < min_n=20" in judged.reason


def test_correlated_windows_do_not_make_a_drop():
    """Consecutive overlapping 7-day windows of a weak rater (SA ~0.67, ~60 repeats a week)
    each 0.16-0.2 below the week before: z of 1.6-2.2, looked at every 6 hours. The old rule
    (a fixed 0.15, held 12 hours) fired after the third window; the test never breaches."""
    rule = RULES["self_agreement_drop"]
    rater = Subject(SubjectKind.RATER, "r10")
    state = AlertState(rule.id, rater)
    for k, (now_sa, before_sa) in enumerate(
        [(0.66, 0.82), (0.64, 0.83), (0.65, 0.84), (0.63, 0.83)]
    ):
        obs = Observation(now_sa, n=60, lookback_value=before_sa, lookback_n=60)
        z = drop_z(obs)
        assert z is not None and z < 3
        judged = judge(obs, rule)
        assert judged.verdict is Verdict.CLEAR, judged.reason
        state = step(state, judged, rule, T0 + timedelta(hours=6 * k)).state
    assert state.status is AlertStatus.OK
    # a real drop, on enough repeats both sides, does breach
    real = Observation(0.45, n=90, lookback_value=0.90, lookback_n=90)
    assert judge(real, rule).verdict is Verdict.BREACH


@pytest.mark.parametrize(("value", "before", "n"), [(1.0, 1.0, 4), (0.0, 0.0, 30)])
def test_drop_z_defined_when_both_sides_agree_fully(value, before, n):
    z = drop_z(Observation(value, n=n, lookback_value=before, lookback_n=n))
    assert z == pytest.approx(0.0)


def test_rater_change_breaches_at_its_limit_and_waits_for_a_baseline():
    rule = RULES["rater_change"]
    limit = rule.condition.threshold
    assert judge(Observation(limit, n=100), rule).verdict is Verdict.BREACH
    assert judge(Observation(limit * 0.9, n=100), rule).verdict is Verdict.CLEAR
    learning = Observation(None, n=0, reason="baseline still being learned")
    assert judge(learning, rule).verdict is Verdict.INSUFFICIENT


def test_rater_change_watches_raters_only():
    from auditor.alerting import Condition, ConditionKind, SubjectSelector
    from auditor.errors import Invalid
    from tests.unit.alerting.support import make

    change = Condition(ConditionKind.RATER_CHANGE, threshold=16.0)
    make(metric="reliability", subject=SubjectSelector(SubjectKind.EVERY_RATER), condition=change)
    with pytest.raises(Invalid, match="rater_change watches raters"):
        make(metric="kappa_s", condition=change)
