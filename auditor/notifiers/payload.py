"""The notification every channel delivers, and its JSON body (the webhook contract).

The body is compact JSON with sorted keys (UTF-8), so the same notification always yields
the same bytes. Fields (``docs/alerts.md`` documents them for receivers):

    version            1; bumped only on incompatible changes
    event_id           32 hex characters; the same for every delivery attempt: de-duplicate on it
    kind               "firing" | "resolved" | "repeat"
    sequence           0 for firing and resolved; 1, 2, ... for repeats of one episode
    project            project id
    rule               {"id", "severity", "condition"}
    subject            "project" | "rater:<id>" | "model:<id>"
    metric, scope      metric point name; "cumulative" or a window such as "7d"
    value              the metric value (null when undefined)
    interval           {"low", "high"} or null
    n                  items the value rests on (pairable or repeated)
    judged_value       the number the condition compared (value, a bound, or the drop)
    threshold          what it was compared with (the drop D for drop rules)
    reason, note       human-readable judgement ("ci_low 0.61 < 0.667") and context
    episode_started_at when the alert fired (ISO 8601, UTC)
    occurred_at        when this notice was produced (ISO 8601, UTC)
    snapshot_id        the snapshot the judgement was made on (null if none)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

KINDS = ("firing", "resolved", "repeat")
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Notification:
    event_id: str
    kind: str
    sequence: int
    project: str
    rule_id: str
    severity: str
    condition: str
    subject: str
    metric: str
    scope: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    judged_value: float | None
    threshold: float | None
    reason: str
    note: str
    episode_started_at: datetime
    occurred_at: datetime
    snapshot_id: int | None = None

    def __post_init__(self) -> None:
        if not self.event_id:
            raise ValueError("notification.event_id must not be empty")
        if self.kind not in KINDS:
            raise ValueError(f"notification.kind must be one of {KINDS}, got {self.kind!r}")
        for name in ("episode_started_at", "occurred_at"):
            if getattr(self, name).tzinfo is None:
                raise ValueError(f"notification.{name} must be timezone-aware")
        for name in ("value", "ci_low", "ci_high", "judged_value", "threshold"):
            number = getattr(self, name)
            if number is not None and not math.isfinite(number):
                raise ValueError(f"notification.{name} must be finite or null, got {number}")

    def to_dict(self) -> dict[str, Any]:
        interval = None
        if self.ci_low is not None or self.ci_high is not None:
            interval = {"low": self.ci_low, "high": self.ci_high}
        return {
            "version": SCHEMA_VERSION,
            "event_id": self.event_id,
            "kind": self.kind,
            "sequence": self.sequence,
            "project": self.project,
            "rule": {"id": self.rule_id, "severity": self.severity, "condition": self.condition},
            "subject": self.subject,
            "metric": self.metric,
            "scope": self.scope,
            "value": self.value,
            "interval": interval,
            "n": self.n,
            "judged_value": self.judged_value,
            "threshold": self.threshold,
            "reason": self.reason,
            "note": self.note,
            "episode_started_at": _utc(self.episode_started_at),
            "occurred_at": _utc(self.occurred_at),
            "snapshot_id": self.snapshot_id,
        }

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> Notification:
        """Rebuild a notification from ``to_dict()`` output (an outbox row's stored body)."""
        if body.get("version") != SCHEMA_VERSION:
            raise ValueError(f"notification body version {body.get('version')!r} not supported")
        interval = body.get("interval") or {}
        rule = body["rule"]
        return cls(
            event_id=body["event_id"],
            kind=body["kind"],
            sequence=body["sequence"],
            project=body["project"],
            rule_id=rule["id"],
            severity=rule["severity"],
            condition=rule["condition"],
            subject=body["subject"],
            metric=body["metric"],
            scope=body["scope"],
            value=body["value"],
            ci_low=interval.get("low"),
            ci_high=interval.get("high"),
            n=body["n"],
            judged_value=body["judged_value"],
            threshold=body["threshold"],
            reason=body["reason"],
            note=body["note"],
            episode_started_at=datetime.fromisoformat(body["episode_started_at"]),
            occurred_at=datetime.fromisoformat(body["occurred_at"]),
            snapshot_id=body["snapshot_id"],
        )

    def to_json_bytes(self) -> bytes:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")

    def summary(self) -> str:
        """One line for humans: e-mail subjects and log messages."""
        shown = "undefined" if self.value is None else f"{self.value:.3f}"
        return (
            f"[{self.kind.upper()}] {self.severity}: {self.metric} ({self.scope}) for "
            f"{self.subject} in {self.project} = {shown}; {self.reason}"
        )


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
