"""Judge one observation of one subject against a rule: breach, clear or insufficient data.

The verdict is the only thing the state machine sees; the number it was decided on travels
with it so the evaluation log can record it (the design asks for "the value it was judged on").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from auditor.alerting.rules import ConditionKind, Rule


class Verdict(StrEnum):
    BREACH = "breach"  # the condition holds
    CLEAR = "clear"  # the condition does not hold, on enough data
    INSUFFICIENT = "insufficient"  # too few items, or the statistic / bound is undefined
    RETIRED = "retired"  # the subject no longer exists (rater or model removed)


@dataclass(frozen=True)
class Observation:
    """One metric point of one subject, plus the value a lookback ago for drop rules.

    ``value``/``ci_low``/``ci_high`` are None when undefined (the statistics report undefined
    values as None with a reason, never NaN); ``n`` counts pairable or repeated items.
    """

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    lookback_value: float | None = None
    reason: str | None = None  # why the value is undefined, passed through to the log

    def __post_init__(self) -> None:
        for name in ("value", "ci_low", "ci_high", "lookback_value"):
            number = getattr(self, name)
            if number is not None and not math.isfinite(number):
                raise ValueError(f"observation.{name} must be finite or None, got {number}")
        if self.n < 0:
            raise ValueError(f"observation.n must not be negative, got {self.n}")


@dataclass(frozen=True)
class Judgement:
    """The verdict and what it rests on.

    ``judged_value`` is the number compared (value, ci_low, ci_high, or the drop
    ``lookback_value - value``); ``limit`` is what it was compared with.
    """

    verdict: Verdict
    judged_value: float | None
    limit: float | None
    reason: str
    observation: Observation | None = None


def retired(reason: str = "subject no longer exists") -> Judgement:
    """The judgement for a subject that disappeared (e.g. a rater removed from the project)."""
    return Judgement(Verdict.RETIRED, None, None, reason)


def judge(observation: Observation, rule: Rule) -> Judgement:
    """Judge ``observation`` against ``rule``.

    Insufficient data comes first: below ``rule.min_n`` items, or when the number the
    condition needs is undefined, the verdict is ``INSUFFICIENT``, never ``CLEAR``: a rule
    that cannot see must not say all is well.
    """
    cond = rule.condition
    judged: float | None  # the number compared with the limit; None when it is undefined
    if observation.n < rule.min_n:
        return _insufficient(observation, f"n={observation.n} < min_n={rule.min_n}")
    if observation.value is None:
        why = observation.reason or "value undefined"
        return _insufficient(observation, f"{rule.metric} undefined: {why}")

    if cond.kind is ConditionKind.DROP:
        if observation.lookback_value is None:
            return _insufficient(observation, f"no value {cond.lookback} ago to compare with")
        drop = _required(cond.drop, "condition.drop")
        judged = observation.lookback_value - observation.value
        breach = judged > drop
        text = f"drop {judged:.4g} {'>' if breach else '<='} {drop:.4g}"
        return _decided(breach, judged, drop, text, observation)

    limit = _required(cond.threshold, "condition.threshold")
    if cond.kind in (ConditionKind.ABOVE, ConditionKind.CONFIDENTLY_ABOVE):
        if cond.kind is ConditionKind.ABOVE:
            judged, label = observation.value, "value"
        else:
            judged, label = observation.ci_low, "ci_low"
        if judged is None:
            return _insufficient(observation, f"{label} undefined (no interval)")
        breach = judged > limit
        text = f"{label} {judged:.4g} {'>' if breach else '<='} {limit:.4g}"
        return _decided(breach, judged, limit, text, observation)
    if cond.kind is ConditionKind.BELOW:
        judged, label = observation.value, "value"
    elif cond.kind is ConditionKind.CONFIDENTLY_BELOW:
        judged, label = observation.ci_high, "ci_high"
    else:
        judged, label = observation.ci_low, "ci_low"
    if judged is None:
        return _insufficient(observation, f"{label} undefined (no interval)")
    breach = judged < limit
    text = f"{label} {judged:.4g} {'<' if breach else '>='} {limit:.4g}"
    return _decided(breach, judged, limit, text, observation)


def _required(number: float | None, name: str) -> float:
    # Condition.__post_init__ already guarantees this; kept so a hand-built object fails loudly.
    if number is None:
        raise ValueError(f"{name} is required by this condition")
    return number


def _insufficient(observation: Observation, reason: str) -> Judgement:
    return Judgement(Verdict.INSUFFICIENT, None, None, reason, observation)


def _decided(
    breach: bool, judged: float, limit: float | None, text: str, observation: Observation
) -> Judgement:
    verdict = Verdict.BREACH if breach else Verdict.CLEAR
    return Judgement(verdict, judged, limit, text, observation)
