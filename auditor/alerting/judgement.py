"""Judge one observation of one subject against a rule: breach, clear or insufficient data.

The verdict is the only thing the state machine sees; the number it was decided on travels
with it so the evaluation log can record it (the design asks for "the value it was judged on").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from auditor.alerting.rules import BOUND_KINDS, ConditionKind, Rule

Z95 = 1.959963984540054  # the intervals of the points are 95% intervals


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
    # the point a lookback ago, for drop rules: its count and interval (None: unknown)
    lookback_n: int | None = None
    lookback_ci_low: float | None = None
    lookback_ci_high: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "value",
            "ci_low",
            "ci_high",
            "lookback_value",
            "lookback_ci_low",
            "lookback_ci_high",
        ):
            number = getattr(self, name)
            if number is not None and not math.isfinite(number):
                raise ValueError(f"observation.{name} must be finite or None, got {number}")
        if self.n < 0:
            raise ValueError(f"observation.n must not be negative, got {self.n}")
        if self.lookback_n is not None and self.lookback_n < 0:
            raise ValueError(f"observation.lookback_n must not be negative, got {self.lookback_n}")


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
        return _judge_drop(observation, rule)
    if cond.kind is ConditionKind.RATER_CHANGE:
        # value: the CUSUM statistic of the rater's evidence stream (auditor.alerting.change)
        limit = _required(cond.threshold, "condition.threshold")
        breach = observation.value >= limit
        text = f"cusum {observation.value:.4g} {'>=' if breach else '<'} h {limit:.4g}"
        return _decided(breach, observation.value, limit, text, observation)

    limit = _required(cond.threshold, "condition.threshold")
    unknown = _not_yet_known(observation, cond.kind, limit, cond.margin)
    if unknown is not None:
        return _insufficient(observation, unknown)
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


def _not_yet_known(
    observation: Observation, kind: ConditionKind, limit: float, margin: float | None
) -> str | None:
    """Why a bound rule cannot judge yet: its interval is wider than the margin and holds the
    threshold (the level is not yet known, which is not the same as below); else None."""
    if margin is None or kind.value not in BOUND_KINDS:
        return None
    low, high = observation.ci_low, observation.ci_high
    if low is None or high is None:
        return None  # the undefined bound is reported as such below
    width = high - low
    if width > margin and low <= limit <= high:
        return f"interval [{low:.4g}, {high:.4g}] wider than margin {margin:.4g}: not yet known"
    return None


def drop_z(observation: Observation) -> float | None:
    """Standard errors of the drop ``lookback_value - value``: the larger of two estimates,
    the pooled binomial one from the two values read as shares of their n (a two-proportion
    z-test on the counts) and, when both points have an interval, the one their (95%)
    half-widths imply. None when the counts are missing or the spread is zero."""
    now, before = observation.value, observation.lookback_value
    n_now, n_before = observation.n, observation.lookback_n
    if now is None or before is None or not n_now or not n_before:
        return None
    spreads = []
    if 0.0 <= now <= 1.0 and 0.0 <= before <= 1.0:
        pooled = (now * n_now + before * n_before) / (n_now + n_before)
        # a pooled share of 0 or 1 has no spread: half a count keeps the test defined
        pooled = min(max(pooled, 0.5 / (n_now + n_before)), 1 - 0.5 / (n_now + n_before))
        spreads.append(pooled * (1 - pooled) * (1 / n_now + 1 / n_before))
    bounds = (
        observation.ci_low,
        observation.ci_high,
        observation.lookback_ci_low,
        observation.lookback_ci_high,
    )
    if all(b is not None for b in bounds):
        lo, hi, lo_b, hi_b = (float(b) for b in bounds)  # type: ignore[arg-type]
        spreads.append(((hi - lo) / (2 * Z95)) ** 2 + ((hi_b - lo_b) / (2 * Z95)) ** 2)
    spread = max(spreads, default=0.0)
    if spread <= 0:
        return None
    return (before - now) / math.sqrt(spread)


def _judge_drop(observation: Observation, rule: Rule) -> Judgement:
    cond = rule.condition
    if observation.lookback_value is None or observation.value is None:
        return _insufficient(observation, f"no value {cond.lookback} ago to compare with")
    if observation.lookback_n is not None and observation.lookback_n < rule.min_n:
        return _insufficient(
            observation,
            f"value {cond.lookback} ago rests on n={observation.lookback_n} < min_n={rule.min_n}",
        )
    drop = _required(cond.drop, "condition.drop")
    judged = observation.lookback_value - observation.value
    text = f"drop {judged:.4g} {'>' if judged > drop else '<='} {drop:.4g}"
    if cond.z is None:
        return _decided(judged > drop, judged, drop, text, observation)
    z = drop_z(observation)
    if z is None:
        return _insufficient(observation, f"{text}; no standard error (n ago unknown)")
    breach = judged > drop and z > cond.z
    text += f", z {z:.3g} {'>' if z > cond.z else '<='} {cond.z:.3g}"
    return _decided(breach, judged, drop, text, observation)


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
