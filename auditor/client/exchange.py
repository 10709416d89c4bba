"""One request and its retries, written once for both clients.

A method of the client is a *plan*: a generator that yields the requests it needs (``Call``)
and the pauses it wants (``Pause``), and is sent each answer (``Reply``). A driver, blocking
(``Client``) or async (``AsyncClient``), performs them; ``judge`` decides, for each try,
whether the answer goes back to the plan, is thrown into it as an exception, or is tried again
after a wait (``auditor.client.retry``). An error the plan does not catch leaves the method.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from auditor.client.errors import RemoteError, RemoteFailure, error_from, unreachable
from auditor.client.retry import RetryPolicy, Safety, may_repeat, retry_after_seconds, wait_before

log = logging.getLogger("auditor.client")
T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One HTTP request of a plan. ``passthrough``: error statuses handed to the plan as a
    ``Reply`` instead of raised (the label poster splits a batch on 413)."""

    method: str
    path: str
    safety: Safety
    params: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    passthrough: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Pause:
    """Wait this many seconds before the plan goes on (polling for a snapshot)."""

    seconds: float


@dataclass(frozen=True)
class Reply:
    status: int
    content: bytes
    replayed: bool = False  # Idempotent-Replayed: the first answer to this key, nothing written

    def json(self) -> Any:
        try:
            return json.loads(self.content)
        except ValueError:  # not the API: a redirect, a proxy's page, another service
            excerpt = self.content[:120].decode("utf-8", "replace").strip()
            raise RemoteFailure(
                f"HTTP {self.status} without the API's JSON (is the URL the auditor service's "
                f"root?): {excerpt!r}",
                status=self.status,
                code="not_json",
            ) from None


NO_REPLY = Reply(0, b"")
Step = Call | Pause
Plan = Generator[Step, Reply, T]


@dataclass
class Counters:
    """What a client has done: requests sent (tries included) and tries repeated, by cause
    ("503", "transport: ReadError"...)."""

    requests: int = 0
    retries: dict[str, int] = field(default_factory=dict)

    @property
    def retried(self) -> int:
        return sum(self.retries.values())


def http_options(url: str, key: str, timeout: float) -> dict[str, Any]:
    """The options of the httpx client under ``Client`` and ``AsyncClient``."""
    from auditor import __version__

    return {
        "base_url": url,
        "headers": {
            "Authorization": f"Bearer {key}",
            "Accept": "application/json",
            "User-Agent": f"auditor-client/{__version__}",
        },
        # connecting is quick or not at all; an answer to a large batch takes longer
        "timeout": httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        "follow_redirects": False,
    }


def judge(
    call: Call,
    policy: RetryPolicy,
    counters: Counters,
    attempt: int,
    elapsed: float,
    outcome: httpx.Response | Exception,
    url: str,
) -> float | Reply | RemoteError:
    """What to do with try ``attempt`` of ``call``: seconds to wait before the next try, the
    reply for the plan, or the error to throw into it."""
    if isinstance(outcome, httpx.Response):
        status = outcome.status_code
        if status < 400 or status in call.passthrough:
            replayed = outcome.headers.get("idempotent-replayed") == "true"
            return Reply(status, outcome.content, replayed)
        retry_after = retry_after_seconds(outcome.headers.get("retry-after"))
        repeat = may_repeat(call.safety, status=status, error=None)
        cause = str(status)
        failure: RemoteError = error_from(status, outcome.content, outcome.reason_phrase)
    else:
        retry_after = None
        repeat = may_repeat(call.safety, status=None, error=outcome)
        cause = f"transport: {type(outcome).__name__}"
        if not isinstance(outcome, httpx.TransportError):
            raise outcome
        sent = call.safety is Safety.ONCE and repeat is False
        failure = unreachable(url, outcome, attempt, maybe_done=sent)
    wait = wait_before(policy, attempt, elapsed, retry_after) if repeat else None
    if wait is None:
        return failure
    counters.retries[cause] = counters.retries.get(cause, 0) + 1
    log.warning("%s %s: %s; try %d in %.2f s", call.method, call.path, cause, attempt + 1, wait)
    return wait
