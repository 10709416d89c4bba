"""The transition table of auditor.alerting.state, asserted row by row.

TABLE below is the table of the module docstring; ``test_docstring_table_is_this_table``
keeps the two identical, and every row is driven through ``step`` from a state reached by
real evaluations (never a hand-built one).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

import auditor.alerting.state as state_module
from auditor.alerting import AlertStatus, EventKind, Rule, Verdict, step
from tests.unit.alerting.support import initial, judgement, minutes, rule

TABLE = [
    ("insufficient_data", "insufficient", "-", "insufficient_data", "-"),
    ("insufficient_data", "retired", "-", "insufficient_data", "-"),
    ("insufficient_data", "clear", "-", "ok", "-"),
    ("insufficient_data", "breach", "for > 0", "pending", "-"),
    ("insufficient_data", "breach", "for = 0", "firing", "firing"),
    ("ok", "clear", "-", "ok", "-"),
    ("ok", "insufficient", "-", "insufficient_data", "-"),
    ("ok", "retired", "-", "insufficient_data", "-"),
    ("ok", "breach", "for > 0", "pending", "-"),
    ("ok", "breach", "for = 0", "firing", "firing"),
    ("pending", "breach", "held < for", "pending", "-"),
    ("pending", "breach", "held >= for", "firing", "firing"),
    ("pending", "clear", "-", "ok", "-"),
    ("pending", "insufficient", "-", "insufficient_data", "-"),
    ("pending", "retired", "-", "insufficient_data", "-"),
    ("firing", "breach", "-", "firing", "due"),
    ("firing", "insufficient", "-", "firing", "due"),
    ("firing", "clear", "clear for < keep_firing_for", "firing", "due"),
    ("firing", "clear", "clear for >= keep_firing_for", "ok", "resolved"),
    ("firing", "retired", "-", "insufficient_data", "resolved"),
]

FOR, KEEP, REPEAT = 10, 10, 60  # minutes


def docstring_table() -> list[tuple[str, ...]]:
    rows = []
    for line in (state_module.__doc__ or "").splitlines():
        if line.startswith("|") and not line.startswith("|-"):
            rows.append(tuple(cell.strip() for cell in line.strip("|").split("|")))
    assert rows[0] == ("from", "verdict", "guard", "to", "notice")
    return rows[1:]


def test_docstring_table_is_this_table():
    assert docstring_table() == TABLE


def test_every_state_and_verdict_has_a_row():
    pairs = {(row[0], row[1]) for row in TABLE}
    assert pairs == {(s.value, v.value) for s in AlertStatus for v in Verdict}


def reach(status: str, guard: str):
    """A state in ``status`` reached by evaluations, the rule, and the next evaluation time."""
    for_minutes = 0 if guard == "for = 0" else FOR
    the_rule = rule(for_minutes=for_minutes, keep_minutes=KEEP, repeat_minutes=REPEAT)
    state = initial(the_rule)
    now = minutes(0)
    if status == "ok":
        state = step(state, judgement(Verdict.CLEAR), the_rule, now).state
    elif status == "pending":
        state = step(state, judgement(Verdict.BREACH), the_rule, now).state
    elif status == "firing":
        firing_rule = rule(for_minutes=0, keep_minutes=KEEP, repeat_minutes=REPEAT)
        state = step(state, judgement(Verdict.BREACH), firing_rule, now).state
        the_rule = firing_rule
        if guard.startswith("clear for"):  # a clear run already under way
            now = minutes(1)
            state = step(state, judgement(Verdict.CLEAR), the_rule, now).state
    assert state.status.value == status
    return state, the_rule, now


def next_time(status: str, guard: str, now):
    if guard == "held < for":
        return now + timedelta(minutes=FOR - 1)
    if guard == "held >= for":
        return now + timedelta(minutes=FOR)
    if guard == "clear for < keep_firing_for":
        return now + timedelta(minutes=KEEP - 2)
    if guard == "clear for >= keep_firing_for":
        return now + timedelta(minutes=KEEP)
    return now + timedelta(minutes=1)


@pytest.mark.parametrize("row", TABLE, ids=["|".join(r) for r in TABLE])
def test_row(row):
    status, verdict, guard, to, notice = row
    state, the_rule, now = reach(status, guard)
    later = next_time(status, guard, now)
    t = step(state, judgement(Verdict(verdict)), the_rule, later)
    assert t.state.status.value == to
    assert t.suppressed == ()
    kinds = [e.kind.value for e in t.events]
    if notice == "due":
        # not due yet within the repeat interval: nothing
        assert kinds == []
        assert_due_repeat(t.state, verdict, the_rule, later)
    else:
        assert kinds == ([] if notice == "-" else [notice])
    if t.state.status is not AlertStatus.FIRING:
        assert t.state.episode_start is None


def assert_due_repeat(state, verdict: str, the_rule: Rule, now) -> None:
    """Once the repeat interval has passed since the firing notice, a repeat goes out."""
    when = minutes(REPEAT)
    j = judgement(Verdict(verdict))
    if verdict == "clear":
        # stay inside keep_firing_for: a clear run that started just before ``when``
        state = step(state, judgement(Verdict.BREACH), the_rule, when - timedelta(minutes=1)).state
    t = step(state, j, the_rule, when)
    assert t.state.status is AlertStatus.FIRING
    assert [e.kind for e in t.events] == [EventKind.REPEAT]
    assert t.events[0].sequence == 1


def test_status_since_moves_only_on_a_change():
    the_rule = rule(for_minutes=FOR)
    s = step(initial(the_rule), judgement(Verdict.BREACH), the_rule, minutes(0)).state
    s = step(s, judgement(Verdict.BREACH), the_rule, minutes(5)).state
    assert s.status is AlertStatus.PENDING
    assert s.status_since == s.breach_since == minutes(0)
    s = step(s, judgement(Verdict.BREACH), the_rule, minutes(10)).state
    assert (s.status, s.status_since, s.episode_start) == (
        AlertStatus.FIRING,
        minutes(10),
        minutes(10),
    )


def test_step_refuses_naive_time_wrong_rule_and_time_going_back():
    the_rule = rule()
    state = step(initial(the_rule), judgement(Verdict.CLEAR), the_rule, minutes(5)).state
    with pytest.raises(ValueError, match="timezone"):
        step(state, judgement(Verdict.CLEAR), the_rule, minutes(6).replace(tzinfo=None))
    with pytest.raises(ValueError, match="earlier"):
        step(state, judgement(Verdict.CLEAR), the_rule, minutes(4))
    with pytest.raises(ValueError, match="belongs to rule"):
        step(state, judgement(Verdict.CLEAR), rule(rule_id="other"), minutes(6))


def test_the_table_in_docs_alerts_md_is_this_table():
    from pathlib import Path

    docs = (Path(__file__).parents[3] / "docs" / "alerts.md").read_text().splitlines()
    start = docs.index("| from              | verdict      | guard                        "
                       "| to                | notice   |")  # fmt: skip
    rows = []
    for line in docs[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(tuple(cell.strip() for cell in line.strip("|").split("|")))
    assert rows == TABLE
