"""Delivery retry policy: exponential backoff with full jitter, then a dead letter.

Pure: the random draw is an argument, so the sender passes ``random.random()`` and tests
pass fixed numbers. Full jitter (a uniform delay in [0, min(cap, base * 2**(k-1)))) spreads
retries of many failed deliveries instead of having them hit a recovering receiver together.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class RetryPolicy:
    base: timedelta = timedelta(seconds=5)
    cap: timedelta = timedelta(hours=1)
    max_attempts: int = 10  # attempts in all, the first included

    def __post_init__(self) -> None:
        if self.base <= timedelta(0):
            raise ValueError(f"retry policy base must be positive, got {self.base}")
        if self.cap < self.base:
            raise ValueError(f"retry policy cap ({self.cap}) must be >= base ({self.base})")
        if self.max_attempts < 1:
            raise ValueError(f"retry policy max_attempts must be >= 1, got {self.max_attempts}")


def backoff_delay(attempts_made: int, policy: RetryPolicy, draw: float) -> timedelta:
    """The wait before the next attempt, after ``attempts_made`` failed attempts (>= 1).

    ``draw`` is a uniform random number in [0, 1).
    """
    if attempts_made < 1:
        raise ValueError(f"attempts_made must be >= 1, got {attempts_made}")
    if not 0.0 <= draw < 1.0:
        raise ValueError(f"draw must be in [0, 1), got {draw}")
    # In float seconds: base * 2**k overflows timedelta long before the cap stops mattering.
    exponent = min(attempts_made - 1, 1000)
    ceiling = min(policy.cap.total_seconds(), policy.base.total_seconds() * 2.0**exponent)
    return timedelta(seconds=ceiling * draw)


def next_attempt_at(
    attempts_made: int, policy: RetryPolicy, now: datetime, draw: float
) -> datetime | None:
    """When to try again after ``attempts_made`` failed attempts; None means dead letter."""
    if attempts_made >= policy.max_attempts:
        return None
    return now + backoff_delay(attempts_made, policy, draw)
