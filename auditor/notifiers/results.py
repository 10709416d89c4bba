"""What a send attempt reports. Channels return this; they never raise."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    OK = "ok"
    RETRYABLE = "retryable"  # try again later (network error, timeout, 5xx, 429)
    PERMANENT = "permanent"  # retrying cannot help (refused target, 4xx, redirect): dead letter


@dataclass(frozen=True)
class SendResult:
    outcome: Outcome
    reason: str = ""
    status_code: int | None = None

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    @classmethod
    def success(cls, reason: str = "", status_code: int | None = None) -> SendResult:
        return cls(Outcome.OK, reason, status_code)

    @classmethod
    def retryable(cls, reason: str, status_code: int | None = None) -> SendResult:
        return cls(Outcome.RETRYABLE, reason, status_code)

    @classmethod
    def permanent(cls, reason: str, status_code: int | None = None) -> SendResult:
        return cls(Outcome.PERMANENT, reason, status_code)
