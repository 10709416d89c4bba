from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.domain import ProjectSettings, from_micros, to_micros
from auditor.snapshots.dirty import LastSnapshot, ProjectFacts, decide, has_new_labels, moved_ranges
from auditor.snapshots.scopes import (
    CUMULATIVE,
    Scope,
    parse_scope,
    scopes_for,
    tick_for,
    tick_start,
    window_at,
)

NOW = datetime(2024, 3, 10, 12, 0, tzinfo=UTC)


def test_tick_is_floor_of_epoch_over_interval():
    assert tick_for(datetime(1970, 1, 1, 0, 1, 59, tzinfo=UTC), 60) == 1
    assert tick_for(datetime(1970, 1, 1, 0, 2, 0, tzinfo=UTC), 60) == 2
    # another zone, same instant, same tick
    plus_two = timezone(timedelta(hours=2))
    assert tick_for(NOW.astimezone(plus_two), 60) == tick_for(NOW, 60)


@given(st.integers(min_value=0, max_value=4_000_000_000_000_000), st.integers(1, 86_400))
def test_tick_start_lies_in_its_tick(us, interval):
    moment = from_micros(us)
    tick = tick_for(moment, interval)
    assert tick_start(tick, interval) <= moment < tick_start(tick + 1, interval)
    assert to_micros(moment) == us


def test_naive_times_are_refused():
    with pytest.raises(ValueError, match="time zone"):
        tick_for(datetime(2024, 1, 1), 60)


def test_scopes_cumulative_first_then_windows():
    scopes = scopes_for(ProjectSettings(windows_days=(30, 7, 7)))
    assert [s.name for s in scopes] == [CUMULATIVE, "7d", "30d"]
    assert parse_scope("7d") == scopes[1]
    for bad in ("week", "0d", "7", "-1d", ""):
        with pytest.raises(ValueError, match="scope must be"):
            parse_scope(bad)


def test_window_bounds():
    w = window_at(parse_scope("7d"), NOW)
    assert (w.start, w.end) == (NOW - timedelta(days=7), NOW)
    assert window_at(Scope(CUMULATIVE), NOW).start is None


def _last(tick=10, watermark=100, n=50, start=None, end=None):
    return LastSnapshot(tick, watermark, n, start, end)


def test_new_labels_by_watermark_and_by_count():
    facts = ProjectFacts(max_label_id=100, label_count=50)
    assert not has_new_labels(_last(), facts)
    assert has_new_labels(_last(), ProjectFacts(101, 51))
    # a label committed late, with an id below the watermark: only the count shows it
    assert has_new_labels(_last(), ProjectFacts(100, 51))
    assert has_new_labels(None, facts)
    assert not has_new_labels(None, ProjectFacts(None, 0))


def test_decide_rules():
    facts = ProjectFacts(100, 50)
    cum, week = Scope(CUMULATIVE), parse_scope("7d")
    assert decide(cum, None, 11, True, False, facts).dirty
    assert not decide(cum, _last(tick=11), 11, True, False, facts).dirty  # one per tick
    assert decide(cum, _last(), 11, True, False, facts).dirty
    assert not decide(cum, _last(), 11, False, True, facts).dirty  # cumulative ignores time
    assert decide(week, _last(), 11, False, True, facts).dirty
    assert not decide(week, _last(), 11, False, False, facts).dirty
    assert not decide(cum, None, 11, False, False, ProjectFacts(None, 0)).dirty


def test_a_project_left_without_labels_is_dirty_once():
    """Every import reverted: the last snapshot's numbers are of deleted labels, so one more
    snapshot (every measure undefined) is due; after it, or for a project that never had
    labels, nothing is."""
    none = ProjectFacts(None, 0)
    cum, week = Scope(CUMULATIVE), parse_scope("7d")
    assert has_new_labels(_last(n=50), none)
    assert not has_new_labels(_last(n=0), none)
    for scope in (cum, week):
        decision = decide(scope, _last(n=50), 11, True, False, none)
        assert decision.dirty and decision.reason == "every label was deleted"
        assert not decide(scope, _last(tick=11, n=50), 11, True, False, none).dirty
        assert not decide(scope, _last(n=0), 11, False, False, none).dirty
        assert not decide(scope, None, 11, False, False, none).dirty


def test_moved_ranges_cover_leaving_and_entering():
    old = window_at(parse_scope("7d"), NOW)
    new = window_at(parse_scope("7d"), NOW + timedelta(hours=1))
    last = _last(start=old.start, end=old.end)
    assert moved_ranges(last, new) == [
        (old.start, new.start, True, False),
        (old.end, new.end, False, True),
    ]
    assert moved_ranges(last, old) == []
    assert moved_ranges(_last(), window_at(Scope(CUMULATIVE), NOW)) == []
