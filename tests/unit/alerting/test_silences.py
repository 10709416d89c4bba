from __future__ import annotations

from datetime import timedelta

import pytest

from auditor.alerting import Silence, Subject, SubjectKind, active_silence, is_silenced
from tests.unit.alerting.support import RATER, minutes, rule

BOB = Subject(SubjectKind.RATER, "bob")


def silence(**changes) -> Silence:
    fields = dict(id="s1", project="p1", starts_at=minutes(0), ends_at=minutes(60), reason="x")
    fields.update(changes)
    return Silence(**fields)


def test_a_silence_is_active_on_its_half_open_interval():
    s = silence(rule_id="r1")
    r = rule()
    assert not is_silenced([s], r, RATER, minutes(-1))
    assert is_silenced([s], r, RATER, minutes(0))
    assert is_silenced([s], r, RATER, minutes(59.9))
    assert not is_silenced([s], r, RATER, minutes(60))


def test_matchers_rule_subject_project():
    r1, r2 = rule(), rule(rule_id="r2")
    by_subject = silence(subject=RATER)
    assert is_silenced([by_subject], r1, RATER, minutes(1))
    assert is_silenced([by_subject], r2, RATER, minutes(1))
    assert not is_silenced([by_subject], r1, BOB, minutes(1))
    both = silence(rule_id="r1", subject=RATER)
    assert is_silenced([both], r1, RATER, minutes(1))
    assert not is_silenced([both], r2, RATER, minutes(1))
    assert not is_silenced([both], r1, BOB, minutes(1))
    other_project = silence(project="p2")
    assert not is_silenced([other_project], r1, RATER, minutes(1))
    whole_project = silence()
    assert is_silenced([whole_project], r2, BOB, minutes(1))


def test_latest_ending_silence_is_reported():
    short, long = silence(id="a", ends_at=minutes(10)), silence(id="b", ends_at=minutes(90))
    assert active_silence([short, long], rule(), RATER, minutes(5)).id == "b"
    assert active_silence([], rule(), RATER, minutes(5)) is None


def test_bad_silences_are_refused():
    with pytest.raises(ValueError, match="after starts_at"):
        silence(ends_at=minutes(0))
    with pytest.raises(ValueError, match="timezone"):
        silence(ends_at=minutes(5).replace(tzinfo=None))
    with pytest.raises(ValueError, match="needs a reason"):
        silence(reason="")
    assert silence(reason="", rule_id="r1").rule_id == "r1"
    assert minutes(0) + timedelta(0) == silence().starts_at
