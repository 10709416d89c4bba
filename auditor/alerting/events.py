"""Notification events produced by the state machine, and their stable ids.

An event id is a hash of (rule id, subject, episode start, kind, sequence). Every input is
fixed once the episode has started, so re-running the same evaluation, or re-sending the
same outbox row after a crash, yields the same id, and a receiver can de-duplicate on it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from auditor.alerting.judgement import Judgement
from auditor.alerting.rules import Subject


class EventKind(StrEnum):
    FIRING = "firing"
    RESOLVED = "resolved"
    REPEAT = "repeat"  # the alert keeps firing; sent every rule.repeat_interval


@dataclass(frozen=True)
class AlertEvent:
    """One notification to deliver (or, when silenced, to record as held back).

    ``sequence`` is 0 for firing and resolved, 1, 2, ... for the repeats of an episode.
    ``episode_start`` is when the alert fired; it names the episode.
    """

    event_id: str
    kind: EventKind
    rule_id: str
    subject: Subject
    episode_start: datetime
    sequence: int
    occurred_at: datetime
    judgement: Judgement
    note: str = ""


def event_id(
    rule_id: str, subject: Subject, episode_start: datetime, kind: EventKind, sequence: int
) -> str:
    """The stable id of one notification: 32 hex characters (128 bits of SHA-256).

    The episode start is normalised to UTC with microseconds, so the same instant written by
    different processes (or read back from the database) gives the same id.
    """
    if episode_start.tzinfo is None:
        raise ValueError("episode_start must be timezone-aware")
    start = episode_start.astimezone(UTC).isoformat(timespec="microseconds")
    # A separator that cannot occur in the ISO timestamp or the kind; rule ids and subject
    # refs are length-prefixed so ("a|b", "c") and ("a", "b|c") cannot collide.
    parts = [rule_id, subject.key, start, kind.value, str(sequence)]
    text = "\x1f".join(f"{len(p)}:{p}" for p in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
