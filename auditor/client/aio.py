"""``AsyncClient``: the client for asyncio pipelines (one ``httpx.AsyncClient``). Its methods
are those of ``Client``, run by the same plans, awaited."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

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


def _awaited(
    plan: Callable[Concatenate[calls.State, P], Plan[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    @functools.wraps(plan)
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(plan(self._state, *args, **kwargs))

    return method


class AsyncClient:
    """``Client`` for asyncio: ``async with AsyncClient(url, key) as client: await
    client.post_labels(labels)``. Same arguments, methods, retries and errors."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        project: str | None = None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.counters = Counters()
        self._state = calls.State(project)
        self._http = httpx.AsyncClient(**http_options(self.url, key, timeout), transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, plan: Plan[T]) -> T:
        try:
            step = next(plan)
            while True:
                if isinstance(step, Pause):
                    await asyncio.sleep(step.seconds)
                    step = plan.send(NO_REPLY)
                    continue
                answer = await self._send(step)
                step = plan.send(answer) if isinstance(answer, Reply) else plan.throw(answer)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _send(self, call: Call) -> Reply | Exception:
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            self.counters.requests += 1
            outcome: httpx.Response | Exception
            try:
                outcome = await self._http.request(
                    call.method, call.path, params=call.params, content=call.body,
                    headers=call.headers,
                )  # fmt: skip
            except httpx.TransportError as error:
                outcome = error
            elapsed = time.monotonic() - started
            verdict = judge(call, self.retry, self.counters, attempt, elapsed, outcome, self.url)
            if not isinstance(verdict, int | float):
                return verdict
            await asyncio.sleep(verdict)

    key_info = _awaited(calls.key_info)
    project = _awaited(calls.project)
    post_labels = _awaited(calls.post_labels)
    plan_repeats = _awaited(calls.plan_repeats)
    repeat_status = _awaited(calls.repeat_status)
    repeat_report = _awaited(calls.repeat_report)
    latest_snapshot = _awaited(calls.latest_snapshot)
    snapshot = _awaited(calls.snapshot)
    wait_for_snapshot = _awaited(calls.wait_for_snapshot)
    history = _awaited(calls.history)
    history_frame = _awaited(calls.history_frame)
    rater_report = _awaited(calls.rater_report)
    imports = _awaited(calls.imports)
    get_import = _awaited(calls.get_import)
    revert_import = _awaited(calls.revert_import)
    alert_states = _awaited(calls.alert_states)
    alert_history = _awaited(calls.alert_history)
    notifications = _awaited(calls.notifications)
