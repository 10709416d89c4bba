"""The alert records the client returns: states, evaluations, notices (docs/alerts.md)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.client.records import at, when


@dataclass(frozen=True)
class AlertState:
    rule_id: str
    subject: str
    status: str
    since: datetime | None
    evaluated_at: datetime | None
    episode_start: datetime | None
    value: float | None
    reason: str | None
    snapshot_id: int | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AlertState:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        times = {k: when(data[k]) for k in ("since", "evaluated_at", "episode_start")}
        return cls(**{**known, **times})


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a rule for a subject: the verdict, the value judged, the move
    (from_status -> to_status), ``change`` (the transition, "" when it only confirmed the
    state) and the notices written (``event_ids``)."""

    id: int
    rule_id: str
    subject: str
    snapshot_id: int
    evaluated_at: datetime
    verdict: str
    judged_value: float | None
    limit_value: float | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    lookback_value: float | None
    reason: str
    from_status: str
    to_status: str
    silence_id: int | None
    event_ids: tuple[str, ...]
    suppressed_event_ids: tuple[str, ...]
    change: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evaluation:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**{**known, "evaluated_at": at(data["evaluated_at"]),
                      "event_ids": tuple(data["event_ids"]),
                      "suppressed_event_ids": tuple(data["suppressed_event_ids"])})  # fmt: skip


@dataclass(frozen=True)
class AlertHistory:
    """Evaluations, newest first; ``more``: how many matching ones ``limit`` left out."""

    evaluations: tuple[Evaluation, ...]
    more: int = 0

    def __iter__(self) -> Iterator[Evaluation]:
        return iter(self.evaluations)

    def __len__(self) -> int:
        return len(self.evaluations)

    @property
    def truncated(self) -> bool:
        return self.more > 0


@dataclass(frozen=True)
class Notification:
    """A notice in the outbox and its delivery (status pending, sent or dead)."""

    id: int
    event_id: str
    channel: str
    rule_id: str
    subject: str
    kind: str
    sequence: int
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    last_status_code: int | None
    created_at: datetime
    sent_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Notification:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        times = {
            "next_attempt_at": at(data["next_attempt_at"]),
            "created_at": at(data["created_at"]),
            "sent_at": when(data["sent_at"]),
        }
        return cls(**{**known, **times})
