"""Alert rules: what to watch (metric, subject, scope), when it is bad (condition), and the
guards that keep a rule from judging too little data or from flapping.

Rules are plain frozen values. Storage keeps them in typed columns; the service turns rows
into ``Rule`` and hands them, with one observation per subject, to :mod:`.judgement` and
:mod:`.state`. Every check raises ``Invalid`` (a ``ValueError``) with ``field`` set to the
rule's field as people write it (the API body's name), so a bad rule is refused
when it is saved, never discovered at evaluation time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum

from auditor.domain import NAME, WINDOW
from auditor.errors import Invalid
from auditor.stats.catalogue import names_for

CUMULATIVE = "cumulative"


class SubjectKind(StrEnum):
    """What a rule watches. ``every_rater`` is a selector: it expands to one subject per rater."""

    PROJECT = "project"
    RATER = "rater"
    EVERY_RATER = "every_rater"
    MODEL = "model"


class ConditionKind(StrEnum):
    BELOW = "below"  # value < threshold
    CONFIDENTLY_BELOW = "confidently_below"  # ci_high < threshold
    NOT_CONFIDENTLY_ABOVE = "not_confidently_above"  # ci_low < threshold (Krippendorff)
    DROP = "drop"  # value a lookback ago - value > drop, and z of the drop > z
    # for metrics where higher is worse (random_choice: the share of random answers)
    ABOVE = "above"  # value > threshold
    CONFIDENTLY_ABOVE = "confidently_above"  # ci_low > threshold: the whole interval is above
    # a sequential test (Bernoulli CUSUM) on each rater's stream of evidence: her repeat
    # agreements and her agreement with the other raters, against her own baseline
    RATER_CHANGE = "rater_change"


# Conditions judged on an interval bound: an interval wider than the rule's margin that holds
# the threshold is "not yet known", never a breach (issue 21).
BOUND_KINDS = frozenset({"confidently_below", "not_confidently_above", "confidently_above"})


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True)
class Subject:
    """One concrete thing a state is kept for: the project, one rater or one model.

    ``ref`` is the rater's or model's external id; it is empty for the project.
    """

    kind: SubjectKind
    ref: str = ""

    def __post_init__(self) -> None:
        if self.kind is SubjectKind.EVERY_RATER:
            raise Invalid("subject.kind: every_rater is a selector, not a subject", field="subject")
        if self.kind is SubjectKind.PROJECT and self.ref:
            raise Invalid(
                f"subject.ref must be empty for the project, got {self.ref!r}", field="subject"
            )
        if self.kind is not SubjectKind.PROJECT and not self.ref:
            raise Invalid(f"subject.ref is required for a {self.kind.value}", field="subject")

    @property
    def key(self) -> str:
        """Stable text form, used in event ids and as a storage key: 'project', 'rater:ann'."""
        return self.kind.value if self.kind is SubjectKind.PROJECT else f"{self.kind}:{self.ref}"


@dataclass(frozen=True)
class SubjectSelector:
    """Which subjects a rule applies to: the project, one rater, every rater, or one model."""

    kind: SubjectKind
    ref: str = ""

    def __post_init__(self) -> None:
        needs_ref = self.kind in (SubjectKind.RATER, SubjectKind.MODEL)
        if needs_ref and not self.ref:
            raise Invalid(f"subject.ref is required for a {self.kind.value}", field="subject")
        if not needs_ref and self.ref:
            raise Invalid(
                f"subject.ref must be empty for {self.kind.value}, got {self.ref!r}",
                field="subject",
            )

    def matches(self, subject: Subject) -> bool:
        if self.kind is SubjectKind.EVERY_RATER:
            return subject.kind is SubjectKind.RATER
        return subject.kind is self.kind and subject.ref == self.ref


# The kinds of subject a snapshot holds metric points for; which metrics each has is the
# metric catalogue's, read when a rule is checked: a rule on any other name could never be
# judged, so it is refused when saved.
RULE_SUBJECT_KINDS = ("project", "rater", "model")


@dataclass(frozen=True)
class Condition:
    """When an observation is bad. ``drop``, ``lookback`` and ``z`` are used by ``DROP`` only.

    ``margin`` (bound conditions only): the widest interval (ci_high - ci_low) judged when
    it holds the threshold; a wider one is insufficient data. None: any width.
    ``z`` (drop only): the drop must also be at least ``z`` standard errors of the
    difference of the two values (their counts, and their intervals when both have one).
    None: the size alone decides (the rule as written before issue 21).
    ``threshold`` of a ``RATER_CHANGE`` condition is the CUSUM's decision limit h.
    """

    kind: ConditionKind
    threshold: float | None = None
    drop: float | None = None
    lookback: timedelta | None = None
    margin: float | None = None
    z: float | None = None

    def __post_init__(self) -> None:
        if self.margin is not None:
            if self.kind.value not in BOUND_KINDS:
                raise Invalid(
                    f"condition.margin is used by bound conditions only, not {self.kind.value}",
                    field="margin",
                )
            if not math.isfinite(self.margin) or self.margin <= 0:
                raise Invalid(
                    f"condition.margin must be a positive number, got {self.margin}",
                    field="margin",
                )
        if self.z is not None:
            if self.kind is not ConditionKind.DROP:
                raise Invalid(
                    f"condition.z is used by a drop condition only, not {self.kind.value}",
                    field="z",
                )
            if not math.isfinite(self.z) or self.z <= 0:
                raise Invalid(f"condition.z must be a positive number, got {self.z}", field="z")
        if self.kind is ConditionKind.RATER_CHANGE:
            if self.threshold is None or not math.isfinite(self.threshold) or self.threshold <= 0:
                raise Invalid(
                    f"condition.threshold (the CUSUM limit h) must be positive, got "
                    f"{self.threshold}",
                    field="threshold",
                )
            if self.drop is not None or self.lookback is not None:
                raise Invalid(
                    "condition.drop/lookback are not used by rater_change", field="condition"
                )
            return
        if self.kind is ConditionKind.DROP:
            if self.drop is None or not math.isfinite(self.drop) or self.drop <= 0:
                raise Invalid(
                    f"condition.drop must be a positive number, got {self.drop}", field="drop"
                )
            if self.lookback is None or self.lookback <= timedelta(0):
                raise Invalid(
                    f"condition.lookback must be positive, got {self.lookback}",
                    field="lookback_seconds",
                )
            if self.threshold is not None:
                raise Invalid(
                    "condition.threshold is not used by a drop condition", field="threshold"
                )
        else:
            if self.threshold is None or not math.isfinite(self.threshold):
                raise Invalid(
                    f"condition.threshold must be a number, got {self.threshold}", field="threshold"
                )
            if self.drop is not None or self.lookback is not None:
                raise Invalid(
                    f"condition.drop/lookback are not used by {self.kind.value}", field="condition"
                )


@dataclass(frozen=True)
class Rule:
    """One alert rule of a project.

    Parameters
    ----------
    id : stable identifier (storage key); part of every event id.
    metric : a metric point name, e.g. ``"kappa_s"``, ``"rho"``, ``"self_agreement"``.
    scope : ``"cumulative"`` or a rolling window such as ``"7d"``.
    min_n : below this many pairable (or repeated) items the state is ``insufficient_data``.
    for_ : how long the condition must hold, observed, before the alert fires.
    keep_firing_for : how long the condition must be observed clear before it resolves.
    repeat_interval : re-notify an alert that keeps firing this often; None: never.
    """

    id: str
    project: str
    metric: str
    subject: SubjectSelector
    condition: Condition
    scope: str = CUMULATIVE
    min_n: int = 10
    for_: timedelta = timedelta(0)
    keep_firing_for: timedelta = timedelta(0)
    severity: Severity = Severity.WARNING
    channels: tuple[str, ...] = field(default=())
    repeat_interval: timedelta | None = timedelta(hours=24)
    enabled: bool = True

    def __post_init__(self) -> None:
        if not self.id:
            raise Invalid("rule.id must not be empty", field="name")
        if not self.project:
            raise Invalid("rule.project must not be empty")
        if not NAME.match(self.metric):
            raise Invalid(
                f"rule.metric must be a metric point name, got {self.metric!r}", field="metric"
            )
        kind = "rater" if self.subject.kind is SubjectKind.EVERY_RATER else self.subject.kind.value
        known = names_for(kind) if kind in RULE_SUBJECT_KINDS else ()
        if self.metric not in known:
            raise Invalid(
                f"rule.metric {self.metric!r} is not reported for a {kind} subject; "
                f"known: {', '.join(known)}",
                field="metric",
            )
        if self.condition.kind is ConditionKind.RATER_CHANGE and self.subject.kind not in (
            SubjectKind.RATER,
            SubjectKind.EVERY_RATER,
        ):
            raise Invalid(
                "rater_change watches raters: subject every_rater or rater:ID", field="subject"
            )
        if self.scope != CUMULATIVE and not WINDOW.match(self.scope):
            raise Invalid(
                f"rule.scope must be 'cumulative' or like '7d', got {self.scope!r}", field="scope"
            )
        if isinstance(self.min_n, bool) or not isinstance(self.min_n, int) or self.min_n < 1:
            raise Invalid(f"rule.min_n must be an integer >= 1, got {self.min_n!r}", field="min_n")
        if self.for_ < timedelta(0):
            raise Invalid(f"rule.for_ must not be negative, got {self.for_}", field="for_seconds")
        if self.keep_firing_for < timedelta(0):
            raise Invalid(
                f"rule.keep_firing_for must be >= 0, got {self.keep_firing_for}",
                field="keep_firing_for_seconds",
            )
        if self.repeat_interval is not None and self.repeat_interval <= timedelta(0):
            raise Invalid(
                f"rule.repeat_interval must be positive, got {self.repeat_interval}",
                field="repeat_interval_seconds",
            )
        for name in self.channels:
            if not NAME.match(name):
                raise Invalid(
                    f"rule.channels: {name!r} is not a valid channel name", field="channels"
                )
        if len(set(self.channels)) != len(self.channels):
            raise Invalid(f"rule.channels has duplicates: {self.channels}", field="channels")

    @property
    def window(self) -> timedelta | None:
        """The rolling window as a duration; None for the cumulative scope."""
        return None if self.scope == CUMULATIVE else timedelta(days=int(self.scope[:-1]))
