from __future__ import annotations

from datetime import timedelta

import pytest

from auditor.alerting import Condition, ConditionKind, Observation, Verdict, judge
from tests.unit.alerting.support import make, rule

B, C, INS = Verdict.BREACH, Verdict.CLEAR, Verdict.INSUFFICIENT


def with_condition(kind: ConditionKind, **kwargs):
    return make(condition=Condition(kind, **kwargs), min_n=10)


BELOW = with_condition(ConditionKind.BELOW, threshold=0.667)
CONF_BELOW = with_condition(ConditionKind.CONFIDENTLY_BELOW, threshold=0.667)
NOT_CONF_ABOVE = with_condition(ConditionKind.NOT_CONFIDENTLY_ABOVE, threshold=0.667)
DROP = with_condition(ConditionKind.DROP, drop=0.15, lookback=timedelta(days=7))


@pytest.mark.parametrize(
    ("the_rule", "obs", "verdict", "judged"),
    [
        # value below threshold
        (BELOW, Observation(0.66, 0.5, 0.8, n=10), B, 0.66),
        (BELOW, Observation(0.667, 0.5, 0.8, n=10), C, 0.667),  # equal is not below
        # confidently below: the upper bound must be below
        (CONF_BELOW, Observation(0.5, 0.4, 0.7, n=50), C, 0.7),
        (CONF_BELOW, Observation(0.5, 0.4, 0.6, n=50), B, 0.6),
        # not confidently above (Krippendorff): the lower bound decides
        (NOT_CONF_ABOVE, Observation(0.8, 0.6, 0.9, n=50), B, 0.6),
        (NOT_CONF_ABOVE, Observation(0.8, 0.7, 0.9, n=50), C, 0.7),
        # drop: lookback - value compared with D, strictly more
        (DROP, Observation(0.6, n=10, lookback_value=0.8), B, pytest.approx(0.2)),
        (DROP, Observation(0.7, n=10, lookback_value=0.8), C, pytest.approx(0.1)),
        (DROP, Observation(0.9, n=10, lookback_value=0.8), C, pytest.approx(-0.1)),
    ],
)
def test_conditions(the_rule, obs, verdict, judged):
    j = judge(obs, the_rule)
    assert j.verdict is verdict
    assert j.judged_value == judged
    assert j.observation is obs


@pytest.mark.parametrize(
    ("the_rule", "obs", "reason"),
    [
        (BELOW, Observation(0.1, n=9), "n=9 < min_n=10"),  # would be a breach with more data
        (BELOW, Observation(0.9, n=0), "n=0 < min_n=10"),  # and never ok on too little
        (BELOW, Observation(None, n=40, reason="a single category in use"), "single category"),
        (CONF_BELOW, Observation(0.1, None, None, n=40), "ci_high undefined"),
        (NOT_CONF_ABOVE, Observation(0.9, None, None, n=40), "ci_low undefined"),
        (DROP, Observation(0.1, n=40), "no value"),
    ],
)
def test_insufficient_data_is_never_clear(the_rule, obs, reason):
    j = judge(obs, the_rule)
    assert j.verdict is INS
    assert reason in j.reason
    assert j.judged_value is None


def test_observation_refuses_nan_and_negative_counts():
    with pytest.raises(ValueError, match=r"observation\.value"):
        Observation(float("nan"), n=3)
    with pytest.raises(ValueError, match=r"observation\.ci_low"):
        Observation(0.5, ci_low=float("inf"), n=3)
    with pytest.raises(ValueError, match=r"observation\.n"):
        Observation(0.5, n=-1)


def test_support_rule_is_a_below_rule():
    assert judge(Observation(0.5, n=10), rule()).verdict is B
