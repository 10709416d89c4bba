from __future__ import annotations

from datetime import timedelta

import pytest

from auditor.alerting import (
    Condition,
    ConditionKind,
    Subject,
    SubjectKind,
    SubjectSelector,
    default_rules,
)
from auditor.alerting.defaults import KRIPPENDORFF_TENTATIVE
from tests.unit.alerting.support import make


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"id": ""}, "rule.id"),
        ({"metric": "Kappa S"}, "rule.metric"),
        ({"metric": "bogus"}, "rule.metric"),  # a name no snapshot reports: never judged
        ({"metric": "self_agreement"}, "rule.metric"),  # a rater metric on the project
        ({"scope": "7 days"}, "rule.scope"),
        ({"scope": "0d"}, "rule.scope"),
        ({"min_n": 0}, "rule.min_n"),
        ({"min_n": True}, "rule.min_n"),
        ({"for_": timedelta(seconds=-1)}, "rule.for_"),
        ({"keep_firing_for": timedelta(seconds=-1)}, "rule.keep_firing_for"),
        ({"repeat_interval": timedelta(0)}, "rule.repeat_interval"),
        ({"channels": ("ops", "ops")}, "rule.channels"),
        ({"channels": ("Ops Team",)}, "rule.channels"),
    ],
)
def test_bad_rules_are_refused_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        make(**changes)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": ConditionKind.BELOW}, "threshold"),
        ({"kind": ConditionKind.BELOW, "threshold": float("nan")}, "threshold"),
        ({"kind": ConditionKind.BELOW, "threshold": 0.5, "drop": 0.1}, "drop"),
        ({"kind": ConditionKind.DROP, "lookback": timedelta(days=7)}, "drop"),
        ({"kind": ConditionKind.DROP, "drop": -0.1, "lookback": timedelta(days=7)}, "drop"),
        ({"kind": ConditionKind.DROP, "drop": 0.1}, "lookback"),
        (
            {"kind": ConditionKind.DROP, "drop": 0.1, "lookback": timedelta(1), "threshold": 0.5},
            "threshold",
        ),
    ],
)
def test_bad_conditions_are_refused(kwargs, field):
    with pytest.raises(ValueError, match=rf"condition\.{field}"):
        Condition(**kwargs)


def test_subjects_and_selectors():
    with pytest.raises(ValueError, match="selector"):
        Subject(SubjectKind.EVERY_RATER)
    with pytest.raises(ValueError, match="required"):
        Subject(SubjectKind.RATER)
    with pytest.raises(ValueError, match="required"):
        SubjectSelector(SubjectKind.MODEL)
    with pytest.raises(ValueError, match="empty"):
        SubjectSelector(SubjectKind.EVERY_RATER, "ann")
    ann, bob = Subject(SubjectKind.RATER, "ann"), Subject(SubjectKind.RATER, "bob")
    model = Subject(SubjectKind.MODEL, "ann")
    every = SubjectSelector(SubjectKind.EVERY_RATER)
    assert every.matches(ann) and every.matches(bob) and not every.matches(model)
    one = SubjectSelector(SubjectKind.RATER, "ann")
    assert one.matches(ann) and not one.matches(bob) and not one.matches(model)
    assert ann.key == "rater:ann" and Subject(SubjectKind.PROJECT).key == "project"


def test_window_scope():
    assert make(scope="7d").window == timedelta(days=7)
    assert make().window is None


def test_default_rules_match_the_issue():
    kappa, rho, self_agreement, change, repeats = default_rules("p1", channels=("ops",))
    for rule in (kappa, rho):
        assert rule.condition.kind is ConditionKind.NOT_CONFIDENTLY_ABOVE
        assert rule.condition.threshold == KRIPPENDORFF_TENTATIVE == 0.667
        assert rule.subject.kind is SubjectKind.PROJECT
        # issue 21: judged once known (100 items, an interval at most 0.06 wide)
        assert rule.min_n == 100 and rule.condition.margin == 0.06
    assert (kappa.metric, rho.metric) == ("kappa_s", "rho")
    assert self_agreement.metric == "self_agreement"
    assert self_agreement.subject.kind is SubjectKind.EVERY_RATER
    assert self_agreement.condition.kind is ConditionKind.DROP
    assert self_agreement.condition.drop == 0.15
    assert self_agreement.condition.lookback == timedelta(days=7)
    # issue 21: 20 repeats on both sides and a z-test instead of a 12-hour hold
    assert self_agreement.min_n == 20 and self_agreement.for_ == timedelta(0)
    assert self_agreement.condition.z == 4.0
    assert change.condition.kind is ConditionKind.RATER_CHANGE
    assert change.subject.kind is SubjectKind.EVERY_RATER
    assert kappa.for_ == rho.for_ == timedelta(0)
    everything = (kappa, rho, self_agreement, change, repeats)
    assert len({r.id for r in everything}) == 5
    assert all(r.channels == ("ops",) for r in everything)
    # "not enough repeats for a reliable self-agreement": short of the needed count two weeks
    assert (repeats.metric, repeats.condition.kind) == ("repeat_coverage", ConditionKind.BELOW)
    assert repeats.condition.threshold == 1.0 and repeats.for_ == timedelta(days=14)
    assert repeats.subject.kind is SubjectKind.EVERY_RATER


def test_rater_metrics_are_accepted_for_every_rater_and_model_metrics_for_a_model():
    # self_agreement and random_choice keep working; reliability and self_kappa are new (v2)
    for metric in ("self_agreement", "random_choice", "reliability", "self_kappa"):
        make(metric=metric, subject=SubjectSelector(SubjectKind.EVERY_RATER))
        with pytest.raises(ValueError):
            make(metric=metric)  # a rater metric on the project is never reported
    make(metric="kappa_va", subject=SubjectSelector(SubjectKind.MODEL, "model-v1"))
    with pytest.raises(ValueError, match="not reported for a model subject"):
        make(metric="kappa_s", subject=SubjectSelector(SubjectKind.MODEL, "model-v1"))
