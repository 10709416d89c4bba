"""The client's retry decisions (pure): which answers and transport errors are tried again for
each kind of request, after how long, and what the rest become."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import httpx
import pytest

from auditor.client.errors import RemoteError, RemoteFailure, RemoteInvalid, error_from
from auditor.client.exchange import Call, Counters, Reply, judge
from auditor.client.retry import RetryPolicy, Safety, may_repeat, retry_after_seconds, wait_before
from auditor.errors import Conflict, Failure, Invalid, NotFound

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/api/v1/projects/p/labels")
SENT_ERRORS = (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError, httpx.ReadTimeout)
UNSENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def test_retry_after_in_seconds_or_as_a_date() -> None:
    now = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("5") == 5.0
    assert retry_after_seconds("Wed, 01 May 2024 10:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Wed, 01 May 2024 09:00:00 GMT", now) == 0.0  # past: now
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None


@pytest.mark.parametrize("safety", list(Safety))
def test_what_is_tried_again(safety: Safety) -> None:
    for status in (429, 503):  # refused before anything was written
        assert may_repeat(safety, status=status, error=None)
    for status in (502, 504):  # a proxy's: the work may have been done
        assert may_repeat(safety, status=status, error=None) is (safety is not Safety.ONCE)
    for status in (400, 401, 403, 404, 409, 413, 422, 500):
        assert not may_repeat(safety, status=status, error=None)
    for kind in UNSENT_ERRORS:  # never reached the server
        assert may_repeat(safety, status=None, error=kind("x", request=REQUEST))
    for kind in SENT_ERRORS:  # sent: only what the server replays is sent again
        repeat = may_repeat(safety, status=None, error=kind("x", request=REQUEST))
        assert repeat is (safety is not Safety.ONCE)
    assert not may_repeat(safety, status=None, error=ValueError("not a transport error"))


def test_waits_follow_retry_after_then_backoff_within_the_policy() -> None:
    policy = RetryPolicy(attempts=5, give_up_after=60, backoff=0.5, max_wait=8)
    assert wait_before(policy, 1, 0.0, 5.0) == 5.0
    assert wait_before(policy, 1, 0.0, 600.0) == 8.0  # at most max_wait
    rng = random.Random(1)
    waits = [wait_before(policy, a, 0.0, None, rng) for a in range(1, 5)]
    assert all(0 <= w <= min(8, 0.5 * 2 ** (a - 1)) for a, w in enumerate(waits, start=1))  # type: ignore[operator]
    assert wait_before(policy, 5, 0.0, 1.0) is None  # attempts spent
    assert wait_before(policy, 2, 58.0, 5.0) is None  # past give_up_after
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)


def _judge(call: Call, outcome: httpx.Response | Exception, attempt: int = 1) -> object:
    return judge(call, RetryPolicy(), Counters(), attempt, 0.0, outcome, "http://127.0.0.1:9")


def _answer(status: int, body: bytes, **headers: str) -> httpx.Response:
    return httpx.Response(status, content=body, headers=headers, request=REQUEST)


def test_a_503_waits_what_the_server_says_and_a_413_goes_to_the_plan() -> None:
    keyed = Call("POST", "/x", Safety.KEYED, passthrough=frozenset({413}))
    busy = b'{"error": {"code": "database_busy", "message": "busy", "details": []}}'
    assert _judge(keyed, _answer(503, busy, **{"Retry-After": "5"})) == 5.0
    too_big = _answer(413, b'{"error": {"code": "batch_too_large", "message": "m"}}')
    assert isinstance(_judge(keyed, too_big), Reply)
    replayed = _judge(keyed, _answer(200, b"{}", **{"Idempotent-Replayed": "true"}))
    assert isinstance(replayed, Reply) and replayed.replayed
    spent = _judge(keyed, _answer(503, busy, **{"Retry-After": "5"}), attempt=10)
    assert isinstance(spent, RemoteFailure) and spent.code == "database_busy"


def test_a_lost_answer_to_a_request_without_a_key_is_not_sent_again() -> None:
    once = Call("POST", "/revert", Safety.ONCE)
    lost = _judge(once, httpx.ReadError("connection reset", request=REQUEST))
    assert isinstance(lost, RemoteFailure) and lost.code == "unreachable"
    assert "may have been done" in str(lost)
    refused = _judge(once, httpx.ConnectError("refused", request=REQUEST))
    assert isinstance(refused, float)
    keyed = Call("POST", "/labels", Safety.KEYED)
    assert isinstance(_judge(keyed, httpx.ReadError("reset", request=REQUEST)), float)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(404, NotFound), (409, Conflict), (422, Invalid), (500, Failure), (503, Failure)],
)
def test_errors_are_the_projects_classes(status: int, kind: type) -> None:
    body = b'{"error": {"code": "c", "message": "m", "details": [{"field": "f", "message": "x"}]}}'
    error = error_from(status, body)
    assert isinstance(error, kind) and isinstance(error, RemoteError)
    assert (error.code, error.field, error.status, error.message) == ("c", "f", status, "m")
    assert error.details() == [{"field": "f", "message": "x"}]


def test_the_field_of_a_schema_error_and_a_proxys_page() -> None:
    body = (
        b'{"error": {"code": "invalid", "message": "the request is not valid", "details": '
        b'[{"location": ["query", "scope", 0], "message": "bad"}]}}'
    )
    error = error_from(422, body)
    assert isinstance(error, RemoteInvalid) and error.field == "scope"
    assert "query.scope.0: bad" in str(error)
    page = error_from(502, b"<html>Bad Gateway</html>", "Bad Gateway")
    assert isinstance(page, RemoteFailure) and page.code == "unavailable"
    assert page.message == "HTTP 502 Bad Gateway: <html>Bad Gateway</html>"


def test_an_answer_that_is_not_the_apis_json_is_named() -> None:
    with pytest.raises(RemoteFailure) as caught:
        Reply(200, b"<html>Welcome to nginx</html>").json()
    assert caught.value.code == "not_json" and "<html>Welcome to nginx" in str(caught.value)
