from __future__ import annotations

from datetime import timedelta, timezone

import pytest

from auditor.alerting import EventKind, Subject, SubjectKind, event_id
from tests.unit.alerting.support import RATER, T0


def test_event_id_is_stable_and_depends_on_every_part():
    base = event_id("r1", RATER, T0, EventKind.FIRING, 0)
    assert base == event_id("r1", RATER, T0, EventKind.FIRING, 0)
    assert len(base) == 32 and int(base, 16) >= 0
    variants = {
        event_id("r2", RATER, T0, EventKind.FIRING, 0),
        event_id("r1", Subject(SubjectKind.RATER, "bob"), T0, EventKind.FIRING, 0),
        event_id("r1", RATER, T0 + timedelta(microseconds=1), EventKind.FIRING, 0),
        event_id("r1", RATER, T0, EventKind.RESOLVED, 0),
        event_id("r1", RATER, T0, EventKind.REPEAT, 1),
        event_id("r1", RATER, T0, EventKind.REPEAT, 2),
    }
    assert base not in variants and len(variants) == 6


def test_same_instant_in_another_zone_gives_the_same_id():
    shifted = T0.astimezone(timezone(timedelta(hours=5)))
    assert event_id("r1", RATER, shifted, EventKind.FIRING, 0) == event_id(
        "r1", RATER, T0, EventKind.FIRING, 0
    )


def test_separators_inside_ids_cannot_collide():
    a = event_id("a\x1f5:b", Subject(SubjectKind.RATER, "c"), T0, EventKind.FIRING, 0)
    b = event_id("a", Subject(SubjectKind.RATER, "b\x1f5:c"), T0, EventKind.FIRING, 0)
    assert a != b


def test_naive_episode_start_is_refused():
    with pytest.raises(ValueError, match="timezone"):
        event_id("r1", RATER, T0.replace(tzinfo=None), EventKind.FIRING, 0)
