"""A Hypothesis stateful test of the alert state machine against an independent model.

The machine evaluates one rule for one subject under random verdicts, clock steps and
silences, and checks after every evaluation:

* never firing before ``for`` has elapsed, and always firing once it has;
* exactly one firing and one resolved notice per episode (none of either for an episode
  that began and ended inside a silence; late firing notices keep the same event id);
* insufficient data never resolves a firing alert (silently or otherwise);
* a silence changes no state: a shadow machine never silenced has the same states.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from auditor.alerting import AlertStatus, EventKind, Verdict, step
from tests.unit.alerting import support
from tests.unit.alerting.test_state_table import TABLE

ALLOWED = {(row[0], row[1], row[3]) for row in TABLE}
VERDICTS = st.sampled_from(
    [Verdict.BREACH] * 4 + [Verdict.CLEAR] * 3 + [Verdict.INSUFFICIENT] * 2 + [Verdict.RETIRED]
)

# Fields that describe what the service believes; notice bookkeeping may differ under silences.
BELIEF = ("status", "status_since", "breach_since", "episode_start", "clear_since",
          "data_missing_since", "evaluated_at")  # fmt: skip


class AlertMachine(RuleBasedStateMachine):
    @initialize(
        for_minutes=st.sampled_from([0, 5, 10, 30]),
        keep_minutes=st.sampled_from([0, 5, 20]),
        repeat_minutes=st.sampled_from([None, 15, 60]),
    )
    def setup(self, for_minutes, keep_minutes, repeat_minutes):
        self.rule = support.rule(for_minutes, keep_minutes, repeat_minutes)
        self.state = support.initial(self.rule)
        self.shadow = self.state  # the same machine, never silenced
        self.now = support.T0
        self.silenced = False
        self.run_start = None  # model: first breach of the current run of breaches
        self.episode = None  # model: (episode_start) of the open episode
        self.sent = Counter()  # (episode_start, kind) -> notices emitted
        self.held_back_ids = {}  # (episode_start, kind, seq) -> event id of a held notice
        self.seen_ids = set()
        self.silenced_in_episode = False

    @rule(verdict=VERDICTS, advance=st.integers(min_value=0, max_value=40))
    def evaluate(self, verdict, advance):
        self.now += timedelta(minutes=advance)
        before = self.state
        j = support.judgement(verdict)
        t = step(before, j, self.rule, self.now, silenced=self.silenced)
        shadow = step(self.shadow, j, self.rule, self.now)
        after = t.state

        assert (before.status.value, verdict.value, after.status.value) in ALLOWED

        # Silences suppress notices, never state.
        for name in BELIEF:
            assert getattr(after, name) == getattr(shadow.state, name), name
        if self.silenced:
            assert all(e.kind is EventKind.RESOLVED for e in t.events)
        else:  # only the close of an episode nobody was told about is held back
            assert all(e.kind is EventKind.RESOLVED for e in t.suppressed)
            assert not (t.suppressed and before.firing_notified)

        # `for`: independent model of the breach run.
        if before.status is not AlertStatus.FIRING:
            if verdict is Verdict.BREACH:
                self.run_start = self.run_start if self.run_start is not None else self.now
                due = self.now - self.run_start >= self.rule.for_
                assert (after.status is AlertStatus.FIRING) == due
                if not due:
                    assert after.status is AlertStatus.PENDING
            else:
                self.run_start = None
                assert after.status is not AlertStatus.FIRING

        # Insufficient data never resolves.
        if before.status is AlertStatus.FIRING and verdict is Verdict.INSUFFICIENT:
            assert after.status is AlertStatus.FIRING
            assert not any(e.kind is EventKind.RESOLVED for e in t.events + t.suppressed)
        if before.status is AlertStatus.FIRING and after.status is not AlertStatus.FIRING:
            assert verdict in (Verdict.CLEAR, Verdict.RETIRED)

        self.account(before, after, t)
        self.state, self.shadow = after, shadow.state

    def account(self, before, after, t):
        if after.status is AlertStatus.FIRING and before.status is not AlertStatus.FIRING:
            self.episode = after.episode_start
            self.silenced_in_episode = False
        self.silenced_in_episode |= self.silenced
        for event in t.events:
            assert event.episode_start == self.episode
            assert event.event_id not in self.seen_ids, "an event id was emitted twice"
            self.seen_ids.add(event.event_id)
            key = (event.episode_start, event.kind, event.sequence)
            if key in self.held_back_ids:  # a late notice keeps its id
                assert self.held_back_ids[key] == event.event_id
            self.sent[(event.episode_start, event.kind)] += 1
        for event in t.suppressed:
            self.held_back_ids[(event.episode_start, event.kind, event.sequence)] = event.event_id
        if before.status is AlertStatus.FIRING and after.status is not AlertStatus.FIRING:
            fired = self.sent[(self.episode, EventKind.FIRING)]
            resolved = self.sent[(self.episode, EventKind.RESOLVED)]
            assert fired == resolved <= 1, "firing and resolved notices must pair up"
            if not self.silenced_in_episode:
                assert fired == resolved == 1
            self.episode = None
            self.run_start = None

    @rule()
    def silence(self):
        self.silenced = True

    @precondition(lambda self: self.silenced)
    @rule()
    def unsilence(self):
        self.silenced = False

    @invariant()
    def at_most_one_firing_notice_per_episode(self):
        if hasattr(self, "sent"):
            assert all(n <= 1 for (_, kind), n in self.sent.items() if kind is not EventKind.REPEAT)

    @invariant()
    def repeats_are_numbered_in_order(self):
        if hasattr(self, "state") and self.state.status is AlertStatus.FIRING:
            assert self.state.repeat_seq >= 0
            if not self.state.firing_notified:
                assert self.state.repeat_seq == 0


AlertMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)
TestAlertMachine = AlertMachine.TestCase


def test_late_firing_notice_after_a_silence_keeps_its_id():
    the_rule = support.rule(repeat_minutes=None)
    s0 = support.initial(the_rule)
    held = step(s0, support.judgement(Verdict.BREACH), the_rule, support.minutes(0), silenced=True)
    assert held.events == () and [e.kind for e in held.suppressed] == [EventKind.FIRING]
    late = step(held.state, support.judgement(Verdict.BREACH), the_rule, support.minutes(5))
    assert [e.event_id for e in late.events] == [held.suppressed[0].event_id]
    again = step(late.state, support.judgement(Verdict.BREACH), the_rule, support.minutes(9))
    assert again.events == ()  # no repeat interval: nothing more until it resolves


def test_resolved_is_sent_inside_a_silence_when_the_firing_was_sent():
    the_rule = support.rule()
    fired = step(support.initial(the_rule), support.judgement(Verdict.BREACH), the_rule,
                 support.minutes(0))  # fmt: skip
    done = step(fired.state, support.judgement(Verdict.CLEAR), the_rule, support.minutes(1),
                silenced=True)  # fmt: skip
    assert [e.kind for e in done.events] == [EventKind.RESOLVED]
    assert done.events[0].episode_start == fired.events[0].episode_start


def test_firing_alert_without_data_keeps_firing_and_says_so():
    the_rule = support.rule(repeat_minutes=30)
    s = step(support.initial(the_rule), support.judgement(Verdict.BREACH), the_rule,
             support.minutes(0)).state  # fmt: skip
    repeats = []
    for m in range(10, 200, 10):
        t = step(s, support.judgement(Verdict.INSUFFICIENT), the_rule, support.minutes(m))
        assert t.state.status is AlertStatus.FIRING
        assert all(e.kind is EventKind.REPEAT for e in t.events)
        repeats += t.events
        s = t.state
    assert s.data_missing_since == support.minutes(10)
    assert [e.sequence for e in repeats] == [1, 2, 3, 4, 5, 6]  # at 30, 60, ..., 180 minutes
    assert all("data insufficient since" in e.note for e in repeats)
    t = step(s, support.judgement(Verdict.CLEAR), the_rule, support.minutes(200))
    assert [e.kind for e in t.events] == [EventKind.RESOLVED]
    assert replace(t.state, evaluated_at=None).status is AlertStatus.OK
