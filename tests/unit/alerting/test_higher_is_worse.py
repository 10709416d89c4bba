"""Rules on metrics where higher is worse (random_choice): ``above`` and ``confidently_above``."""

from __future__ import annotations

import pytest

from auditor.alerting import Condition, ConditionKind, Observation, Verdict, judge
from auditor.alerting.rules import Rule, SubjectKind, SubjectSelector
from auditor.domain import ProjectSettings
from auditor.stats import compute_measures
from tests.unit.alerting.support import make
from tests.unit.stats.helpers import rater_model_project


def _random_choice_rule(kind: ConditionKind) -> Rule:
    return make(
        metric="random_choice",
        subject=SubjectSelector(SubjectKind.EVERY_RATER),
        condition=Condition(kind, threshold=0.3),
        min_n=10,
    )


ABOVE, CONFIDENTLY_ABOVE = ConditionKind.ABOVE, ConditionKind.CONFIDENTLY_ABOVE
NO_CI = Observation(0.5, None, None, n=10)


@pytest.mark.parametrize(
    ("kind", "obs", "verdict", "judged"),
    [
        (ABOVE, Observation(0.31, 0.2, 0.4, n=10), Verdict.BREACH, 0.31),
        (ABOVE, Observation(0.3, 0.2, 0.4, n=10), Verdict.CLEAR, 0.3),  # equal is not above
        (CONFIDENTLY_ABOVE, Observation(0.5, 0.31, 0.6, n=10), Verdict.BREACH, 0.31),
        (CONFIDENTLY_ABOVE, Observation(0.5, 0.29, 0.6, n=10), Verdict.CLEAR, 0.29),
        (CONFIDENTLY_ABOVE, NO_CI, Verdict.INSUFFICIENT, None),
    ],
)  # fmt: skip
def test_above_conditions(
    kind: ConditionKind, obs: Observation, verdict: Verdict, judged: float | None
) -> None:
    j = judge(obs, _random_choice_rule(kind))
    assert j.verdict is verdict
    assert j.judged_value == judged


@pytest.mark.parametrize("kind", [ConditionKind.ABOVE, ConditionKind.CONFIDENTLY_ABOVE])
def test_a_random_choice_rule_fires_when_a_raters_x_rises(kind: ConditionKind) -> None:
    # the same rater before and after a bad spell: x from 0.1 to 0.6 (drawn from the model)
    verdicts = []
    for x in (0.1, 0.6):
        labels = rater_model_project(3000, (0.0, 0.1, x), (0.5, 0.3, 0.2), 2, 0.25, seed=4)
        rater = compute_measures(labels, ProjectSettings()).raters[2]
        m = rater.random_choice
        obs = Observation(m.value, m.ci_low, m.ci_high, n=m.n, reason=m.reason)
        verdicts.append(judge(obs, _random_choice_rule(kind)).verdict)
    assert verdicts == [Verdict.CLEAR, Verdict.BREACH]
