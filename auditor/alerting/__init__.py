"""Alert rules and the alert state machine. Pure code: no I/O, no clock, no randomness.

The service judges each observation (:func:`judge`), advances the stored state
(:func:`step`) and writes the new state plus the returned events to the outbox in one
transaction. Transport lives in :mod:`auditor.notifiers`.
"""

from auditor.alerting.backoff import RetryPolicy, backoff_delay, next_attempt_at
from auditor.alerting.defaults import default_rules
from auditor.alerting.events import AlertEvent, EventKind, event_id
from auditor.alerting.judgement import Judgement, Observation, Verdict, judge, retired
from auditor.alerting.rules import (
    CUMULATIVE,
    Condition,
    ConditionKind,
    Rule,
    Severity,
    Subject,
    SubjectKind,
    SubjectSelector,
)
from auditor.alerting.silences import Silence, active_silence, is_silenced
from auditor.alerting.state import AlertState, AlertStatus, Transition, step

__all__ = [
    "CUMULATIVE",
    "AlertEvent",
    "AlertState",
    "AlertStatus",
    "Condition",
    "ConditionKind",
    "EventKind",
    "Judgement",
    "Observation",
    "RetryPolicy",
    "Rule",
    "Severity",
    "Silence",
    "Subject",
    "SubjectKind",
    "SubjectSelector",
    "Transition",
    "Verdict",
    "active_silence",
    "backoff_delay",
    "default_rules",
    "event_id",
    "is_silenced",
    "judge",
    "next_attempt_at",
    "retired",
    "step",
]
