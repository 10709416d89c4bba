"""When the client asks again, and after how long: pure decisions, shared by ``Client`` and
``AsyncClient`` (only their sleeping differs).

What the server does (docs/api.md, "Errors" and "Labels"), and so what is safe to repeat:

- **503** (``database_busy``, ``unavailable``) and **429** come with ``Retry-After``; the
  request was refused before anything was written (a failed transaction rolls back). 502 and
  504 come from a proxy in front; the upstream may or may not have done the work.
- **A transport error** (the connection refused, dropped or timed out) says nothing about the
  server's side when it happens after the request went out: the batch may be stored and only
  the answer lost. A 503 used to drop the keep-alive connection (issue 26), so the request
  after a 503 could fail this way too.
- **Idempotency-Key**: the same key and body replays the first answer and writes nothing;
  two requests with one key at once write once. So a label batch, always sent with its own
  key, is repeated on every one of these, with the same key, and is never written twice. A
  repeat plan carries a ``request_id`` with the same promise; reads change nothing.
- A write without such a key (an import revert) is repeated only where the server certainly
  did nothing: the connection was never made, or the answer was 429 or 503.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum

import httpx


class Safety(Enum):
    """What repeating a request may do on the server."""

    READ = "read"  # nothing: a read
    KEYED = "keyed"  # nothing more: the server replays the first answer (a key or request id)
    ONCE = "once"  # may do it twice: repeated only when the first certainly did nothing


# Statuses that ask to come back later. 503 and 429 say the work was not done; 502 and 504
# (a proxy's) do not say, so a ONCE request is not repeated on them.
RETRIED = frozenset({429, 502, 503, 504})
NOTHING_DONE = frozenset({429, 503})

# Transport errors raised before the request could reach the server.
NOT_SENT: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)


@dataclass(frozen=True)
class RetryPolicy:
    """How long the client keeps trying one request.

    attempts: tries in all (the first included). give_up_after: seconds from the first try
    after which no new try starts. Waits: the server's ``Retry-After`` when it gives one (at
    most ``max_wait``), else exponential backoff with full jitter from ``backoff`` seconds,
    doubling, at most ``max_wait``."""

    attempts: int = 10
    give_up_after: float = 300.0
    backoff: float = 0.25
    max_wait: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if min(self.give_up_after, self.backoff, self.max_wait) < 0:
            raise ValueError("times must not be negative")


NO_RETRY = RetryPolicy(attempts=1)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from now: a number of seconds or an HTTP date; None when
    absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


def may_repeat(safety: Safety, *, status: int | None, error: Exception | None) -> bool:
    """Whether an answer ``status`` (or a transport ``error``) may be tried again."""
    if error is not None:
        if not isinstance(error, httpx.TransportError):
            return False
        return safety is not Safety.ONCE or isinstance(error, NOT_SENT)
    if status not in RETRIED:
        return False
    return safety is not Safety.ONCE or status in NOTHING_DONE


def wait_before(
    policy: RetryPolicy,
    attempt: int,
    elapsed: float,
    retry_after: float | None,
    rng: random.Random | None = None,
) -> float | None:
    """Seconds to wait before try ``attempt + 1`` (``attempt`` tries made, ``elapsed``
    seconds since the first); None when the policy says stop."""
    if attempt >= policy.attempts:
        return None
    if retry_after is not None:
        wait = min(retry_after, policy.max_wait)
    else:
        ceiling = min(policy.max_wait, policy.backoff * 2 ** (attempt - 1))
        wait = (rng or random).uniform(0, ceiling)
    if elapsed + wait > policy.give_up_after:
        return None
    return wait
