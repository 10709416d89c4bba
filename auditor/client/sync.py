"""``Client``: the blocking client (one ``httpx.Client``, keep-alive connections)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import httpx

from auditor.client import calls
from auditor.client.exchange import (
    NO_REPLY,
    Call,
    Counters,
    Pause,
    Plan,
    Reply,
    http_options,
    judge,
)
from auditor.client.retry import RetryPolicy

P = ParamSpec("P")
T = TypeVar("T")


def _blocking(
    plan: Callable[Concatenate[calls.State, P], Plan[T]],
) -> Callable[Concatenate[Client, P], T]:
    @functools.wraps(plan)
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(plan(self._state, *args, **kwargs))

    return method


class Client:
    """A client of one project's API: ``Client(url, key)`` (the project is the key's, asked
    of the server on first use; ``project=`` skips that). Use it in a ``with`` block, or
    ``close()`` it. Every method retries what is safe to retry (``auditor.client.retry``)
    and raises the project's errors (``auditor.errors``: ``NotFound``, ``Invalid``...).

    ``timeout``: seconds to wait for an answer (a batch of 10,000 labels takes a few);
    ``retry``: the ``RetryPolicy``; ``transport``: an httpx transport (tests)."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        project: str | None = None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.counters = Counters()
        self._state = calls.State(project)
        self._http = httpx.Client(**http_options(self.url, key, timeout), transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @property
    def project_slug(self) -> str:
        """The project this client works on (asks the server when it was not given)."""
        return self.key_info().project if self._state.project is None else self._state.project

    def _run(self, plan: Plan[T]) -> T:
        try:
            step = next(plan)
            while True:
                if isinstance(step, Pause):
                    time.sleep(step.seconds)
                    step = plan.send(NO_REPLY)
                    continue
                answer = self._send(step)
                step = plan.send(answer) if isinstance(answer, Reply) else plan.throw(answer)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def _send(self, call: Call) -> Reply | Exception:
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            self.counters.requests += 1
            outcome: httpx.Response | Exception
            try:
                outcome = self._http.request(
                    call.method, call.path, params=call.params, content=call.body,
                    headers=call.headers,
                )  # fmt: skip
            except httpx.TransportError as error:
                outcome = error
            elapsed = time.monotonic() - started
            verdict = judge(call, self.retry, self.counters, attempt, elapsed, outcome, self.url)
            if not isinstance(verdict, int | float):
                return verdict
            time.sleep(verdict)

    key_info = _blocking(calls.key_info)
    project = _blocking(calls.project)
    post_labels = _blocking(calls.post_labels)
    plan_repeats = _blocking(calls.plan_repeats)
    repeat_status = _blocking(calls.repeat_status)
    repeat_report = _blocking(calls.repeat_report)
    latest_snapshot = _blocking(calls.latest_snapshot)
    snapshot = _blocking(calls.snapshot)
    wait_for_snapshot = _blocking(calls.wait_for_snapshot)
    history = _blocking(calls.history)
    history_frame = _blocking(calls.history_frame)
    rater_report = _blocking(calls.rater_report)
    imports = _blocking(calls.imports)
    get_import = _blocking(calls.get_import)
    revert_import = _blocking(calls.revert_import)
    alert_states = _blocking(calls.alert_states)
    alert_history = _blocking(calls.alert_history)
    notifications = _blocking(calls.notifications)
