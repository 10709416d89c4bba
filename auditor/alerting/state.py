"""The alert state machine: one state per (rule, subject), advanced by one judgement at a time.

``step`` is pure: state + judgement + rule + now -> new state + notification events. The
service stores the new state and the events (outbox rows) in one transaction.

States
------
``ok``: the condition was observed clear on enough data.
``pending``: the condition holds, but not yet for ``rule.for_``.
``firing``: the condition held for ``rule.for_``; an episode is open.
``insufficient_data``: too few items, or the statistic / its bound is undefined; never ``ok``.
A new (rule, subject) starts in ``insufficient_data``: nothing has been observed yet.

"Resolved" is not a state: it is the notice emitted when a firing episode ends (firing -> ok,
or firing -> insufficient_data when the subject is retired).

Transitions
-----------
Verdicts: breach, clear, insufficient, retired (see :mod:`.judgement`). ``held`` is
``now - breach_since`` (the breach run started when the alert left ok); ``clear for`` is
``now - clear_since`` (the first clear observation after the last breach). Notice ``due``
means: the firing notice if a silence held it back and none is active now, else a repeat
notice if ``rule.repeat_interval`` has passed since the last notice, else nothing.

| from              | verdict      | guard                        | to                | notice   |
|-------------------|--------------|------------------------------|-------------------|----------|
| insufficient_data | insufficient | -                            | insufficient_data | -        |
| insufficient_data | retired      | -                            | insufficient_data | -        |
| insufficient_data | clear        | -                            | ok                | -        |
| insufficient_data | breach       | for > 0                      | pending           | -        |
| insufficient_data | breach       | for = 0                      | firing            | firing   |
| ok                | clear        | -                            | ok                | -        |
| ok                | insufficient | -                            | insufficient_data | -        |
| ok                | retired      | -                            | insufficient_data | -        |
| ok                | breach       | for > 0                      | pending           | -        |
| ok                | breach       | for = 0                      | firing            | firing   |
| pending           | breach       | held < for                   | pending           | -        |
| pending           | breach       | held >= for                  | firing            | firing   |
| pending           | clear        | -                            | ok                | -        |
| pending           | insufficient | -                            | insufficient_data | -        |
| pending           | retired      | -                            | insufficient_data | -        |
| firing            | breach       | -                            | firing            | due      |
| firing            | insufficient | -                            | firing            | due      |
| firing            | clear        | clear for < keep_firing_for  | firing            | due      |
| firing            | clear        | clear for >= keep_firing_for | ok                | resolved |
| firing            | retired      | -                            | insufficient_data | resolved |

Why these choices
-----------------
* ``for`` is measured on observations: a pending alert that loses its data (insufficient)
  drops to ``insufficient_data`` and its clock restarts, as a Prometheus pending alert whose
  series disappears is dropped. An unobserved stretch is not evidence that the condition held.
* **Insufficient data never resolves a firing alert.** Prometheus resolves an alert whose
  series vanished, which silently closes incidents exactly when measurement broke. Here a
  firing alert stays firing (Grafana's "keep last state" for NoData), records
  ``data_missing_since`` (carried in the note of its repeat notices), and resets its clear
  run: it resolves only after ``keep_firing_for`` of *observed* clear evaluations. The only
  way out without a clear observation is ``retired`` (the rater or model was removed), which
  closes the episode with an explicit resolved notice saying so.
* ``keep_firing_for`` counts from the first clear observation (Prometheus counts from the
  last breach; with evaluations only after snapshots the two differ by one interval at most,
  and the clear-run form cannot be satisfied by a gap in the data).
* Silences (``silenced=True``) change no state. They hold back firing and repeat notices; a
  held-back firing notice is sent, with the same event id, at the first evaluation after the
  silence ends if the alert is still firing. A resolved notice is sent iff the episode's
  firing notice was sent, silence or not: a receiver told of an incident must be told it
  ended (Alertmanager would mute it; we prefer no dangling incidents). An episode that began
  and ended inside a silence sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TypedDict, Unpack

from auditor.alerting.events import AlertEvent, EventKind, event_id
from auditor.alerting.judgement import Judgement, Verdict
from auditor.alerting.rules import Rule, Subject

__all__ = ["AlertState", "AlertStatus", "Transition", "step"]


class AlertStatus(StrEnum):
    OK = "ok"
    PENDING = "pending"
    FIRING = "firing"
    INSUFFICIENT_DATA = "insufficient_data"


@dataclass(frozen=True)
class AlertState:
    """The stored state of one rule for one subject. Timestamps are timezone-aware."""

    rule_id: str
    subject: Subject
    status: AlertStatus = AlertStatus.INSUFFICIENT_DATA
    evaluated_at: datetime | None = None
    status_since: datetime | None = None
    breach_since: datetime | None = None  # pending/firing: start of the breach run
    episode_start: datetime | None = None  # firing: when the episode fired
    clear_since: datetime | None = None  # firing: first clear observation of the clear run
    data_missing_since: datetime | None = None  # firing: data insufficient since
    firing_notified: bool = False  # firing: the firing notice was emitted (not held back)
    last_notified_at: datetime | None = None  # firing: last firing or repeat notice emitted
    repeat_seq: int = 0  # firing: repeats emitted in this episode


@dataclass(frozen=True)
class Transition:
    """The outcome of one evaluation: the new state, notices to send, notices held back."""

    previous: AlertState
    state: AlertState
    events: tuple[AlertEvent, ...] = ()
    suppressed: tuple[AlertEvent, ...] = ()

    @property
    def changed(self) -> bool:
        return self.previous.status is not self.state.status


def step(
    state: AlertState,
    judgement: Judgement,
    rule: Rule,
    now: datetime,
    *,
    silenced: bool = False,
) -> Transition:
    """Advance ``state`` by one judgement made at ``now`` (see the module's transition table).

    ``silenced`` is the outcome of :func:`auditor.alerting.silences.is_silenced` for this rule
    and subject at ``now``; it holds notices back and never changes the state.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    if state.rule_id != rule.id:
        raise ValueError(f"state belongs to rule {state.rule_id!r}, not {rule.id!r}")
    if state.evaluated_at is not None and now < state.evaluated_at:
        raise ValueError(f"now ({now}) is earlier than the last evaluation ({state.evaluated_at})")
    if state.status is AlertStatus.FIRING:
        return _step_firing(state, judgement, rule, now, silenced)
    return _step_not_firing(state, judgement, rule, now, silenced)


class _Episode(TypedDict, total=False):
    """The fields of a firing episode, reset when one starts or ends."""

    episode_start: datetime | None
    clear_since: datetime | None
    data_missing_since: datetime | None
    firing_notified: bool
    last_notified_at: datetime | None
    repeat_seq: int


class _Changes(_Episode, total=False):
    """The fields an evaluation may change besides the status and its two times."""

    breach_since: datetime | None


def _moved(
    state: AlertState, status: AlertStatus, now: datetime, **changes: Unpack[_Changes]
) -> AlertState:
    """The state after an evaluation at ``now``; ``status_since`` moves only on a change."""
    since = state.status_since if status is state.status else now
    return replace(state, status=status, evaluated_at=now, status_since=since, **changes)


_EPISODE_RESET: _Episode = {
    "episode_start": None,
    "clear_since": None,
    "data_missing_since": None,
    "firing_notified": False,
    "last_notified_at": None,
    "repeat_seq": 0,
}


def _step_not_firing(
    state: AlertState, judgement: Judgement, rule: Rule, now: datetime, silenced: bool
) -> Transition:
    verdict = judgement.verdict
    if verdict is Verdict.CLEAR:
        new = _moved(state, AlertStatus.OK, now, breach_since=None)
        return Transition(state, new)
    if verdict in (Verdict.INSUFFICIENT, Verdict.RETIRED):
        new = _moved(state, AlertStatus.INSUFFICIENT_DATA, now, breach_since=None)
        return Transition(state, new)
    # breach: the run continues only from pending; from ok or no data it starts now.
    breach_since = state.breach_since if state.status is AlertStatus.PENDING else now
    if breach_since is None:
        breach_since = now
    if now - breach_since < rule.for_:
        new = _moved(state, AlertStatus.PENDING, now, breach_since=breach_since)
        return Transition(state, new)
    firing = _moved(state, AlertStatus.FIRING, now, breach_since=breach_since, **_EPISODE_RESET)
    firing = replace(firing, episode_start=now)
    notice = _event(firing, rule, EventKind.FIRING, 0, now, judgement, "")
    if silenced:
        return Transition(state, firing, suppressed=(notice,))
    firing = replace(firing, firing_notified=True, last_notified_at=now)
    return Transition(state, firing, events=(notice,))


def _step_firing(
    state: AlertState, judgement: Judgement, rule: Rule, now: datetime, silenced: bool
) -> Transition:
    verdict = judgement.verdict
    if verdict is Verdict.RETIRED:
        note = f"subject retired: {judgement.reason}"
        new = _moved(state, AlertStatus.INSUFFICIENT_DATA, now, breach_since=None, **_EPISODE_RESET)
        return _resolve(state, new, rule, now, judgement, note)
    if verdict is Verdict.BREACH:
        held = replace(state, clear_since=None, data_missing_since=None)
    elif verdict is Verdict.INSUFFICIENT:
        missing = state.data_missing_since or now
        held = replace(state, clear_since=None, data_missing_since=missing)
    else:
        clear_since = state.clear_since or now
        if now - clear_since >= rule.keep_firing_for:
            new = _moved(state, AlertStatus.OK, now, breach_since=None, **_EPISODE_RESET)
            return _resolve(state, new, rule, now, judgement, "")
        held = replace(state, clear_since=clear_since, data_missing_since=None)
    held = _moved(held, AlertStatus.FIRING, now)
    return _due_notice(state, held, rule, now, judgement, silenced)


def _resolve(
    state: AlertState,
    new: AlertState,
    rule: Rule,
    now: datetime,
    judgement: Judgement,
    note: str,
) -> Transition:
    notice = _event(state, rule, EventKind.RESOLVED, 0, now, judgement, note)
    if state.firing_notified:
        return Transition(state, new, events=(notice,))
    return Transition(state, new, suppressed=(notice,))  # never announced: nothing to close


def _due_notice(
    state: AlertState,
    held: AlertState,
    rule: Rule,
    now: datetime,
    judgement: Judgement,
    silenced: bool,
) -> Transition:
    """A still-firing alert: a late firing notice, a repeat notice, or nothing."""
    note = ""
    if held.data_missing_since is not None:
        note = f"data insufficient since {held.data_missing_since.isoformat()}: {judgement.reason}"
    if not held.firing_notified:
        notice = _event(held, rule, EventKind.FIRING, 0, now, judgement, note)
    elif rule.repeat_interval is not None and held.last_notified_at is not None:
        if now - held.last_notified_at < rule.repeat_interval:
            return Transition(state, held)
        seq = held.repeat_seq + 1
        notice = _event(held, rule, EventKind.REPEAT, seq, now, judgement, note)
    else:
        return Transition(state, held)
    if silenced:
        return Transition(state, held, suppressed=(notice,))
    if notice.kind is EventKind.FIRING:
        sent = replace(held, firing_notified=True, last_notified_at=now)
    else:
        sent = replace(held, last_notified_at=now, repeat_seq=notice.sequence)
    return Transition(state, sent, events=(notice,))


def _event(
    state: AlertState,
    rule: Rule,
    kind: EventKind,
    sequence: int,
    now: datetime,
    judgement: Judgement,
    note: str,
) -> AlertEvent:
    start = state.episode_start
    if start is None:  # a firing state always has one; this guards hand-built states
        raise ValueError("a firing state must have episode_start")
    return AlertEvent(
        event_id=event_id(rule.id, state.subject, start, kind, sequence),
        kind=kind,
        rule_id=rule.id,
        subject=state.subject,
        episode_start=start,
        sequence=sequence,
        occurred_at=now,
        judgement=judgement,
        note=note,
    )
