"""Silences: mute a rule, a subject, or one rule for one subject, until a time.

A silence is a pure check. The service passes its outcome to ``step(..., silenced=...)``,
which then holds notices back but changes the state exactly as it would otherwise: muting
the messenger must not change what the service believes about reliability.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from auditor.alerting.rules import Rule, Subject
from auditor.errors import Invalid


@dataclass(frozen=True)
class Silence:
    """Mute notices of ``rule_id`` (or every rule of ``project``) for ``subject`` (or all).

    Active on the half-open interval [starts_at, ends_at).
    """

    id: str
    project: str
    starts_at: datetime
    ends_at: datetime
    rule_id: str | None = None
    subject: Subject | None = None
    reason: str = ""
    created_by: str = ""

    def __post_init__(self) -> None:
        if self.starts_at.tzinfo is None or self.ends_at.tzinfo is None:
            raise Invalid(
                "silence.starts_at and silence.ends_at must be timezone-aware", field="ends_at"
            )
        if self.ends_at <= self.starts_at:
            raise Invalid(
                f"silence.ends_at ({self.ends_at}) must be after starts_at ({self.starts_at})",
                field="ends_at",
            )
        # Muting a whole project is allowed, but it must be said explicitly: an empty
        # matcher from a form left blank would otherwise silence everything.
        if self.rule_id is None and self.subject is None and not self.reason:
            raise Invalid("a silence of a whole project needs a reason", field="reason")

    def matches(self, rule: Rule, subject: Subject, now: datetime) -> bool:
        if not self.starts_at <= now < self.ends_at:
            return False
        if self.project != rule.project:
            return False
        if self.rule_id is not None and self.rule_id != rule.id:
            return False
        return self.subject is None or self.subject == subject


def active_silence(
    silences: Iterable[Silence], rule: Rule, subject: Subject, now: datetime
) -> Silence | None:
    """The silence that mutes ``rule`` for ``subject`` at ``now`` (latest-ending), or None."""
    matching = [s for s in silences if s.matches(rule, subject, now)]
    return max(matching, key=lambda s: s.ends_at, default=None)


def is_silenced(silences: Iterable[Silence], rule: Rule, subject: Subject, now: datetime) -> bool:
    return active_silence(silences, rule, subject, now) is not None
