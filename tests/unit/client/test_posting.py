"""The label poster's plan (pure: driven here by a scripted answerer, no network): batches
cover the labels once, in order, within the server's limits whatever the 413s said, and each
batch's key is its place, so the same labels posted again have the same keys."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.client import posting
from auditor.client.errors import LabelsRejected
from auditor.client.exchange import Call, Reply
from auditor.errors import Invalid


def _error(status: int, code: str, **detail: object) -> Reply:
    body = {"error": {"code": code, "message": code, "details": [detail] if detail else []}}
    return Reply(status, json.dumps(body).encode())


def server(batch_cap: int, body_cap: int) -> Callable[[Call], Reply]:
    """Answers as the API does: 413 over either cap (naming it), else stored."""

    def answer(call: Call) -> Reply:
        assert call.body is not None
        rows = json.loads(call.body)["labels"]
        if len(call.body) > body_cap:
            return _error(413, "payload_too_large", field="body", max=body_cap)
        if len(rows) > batch_cap:
            return _error(413, "batch_too_large", field="labels", max=batch_cap)
        return Reply(200, json.dumps({"inserted": len(rows), "duplicates": 0}).encode())

    return answer


def run(plan, answer: Callable[[Call], Reply]) -> tuple[object, list[Call]]:
    calls: list[Call] = []
    try:
        step = next(plan)
        while True:
            calls.append(step)
            reply = answer(step)
            if reply.status >= 400 and reply.status not in step.passthrough:
                from auditor.client.errors import error_from

                step = plan.throw(error_from(reply.status, reply.content))
            else:
                step = plan.send(reply)
    except StopIteration as done:
        return done.value, calls


def labels(n: int) -> list[dict[str, str]]:
    return [{"item": f"i{k}", "rater": "r", "label": "a" * (k % 7)} for k in range(n)]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    batch_cap=st.integers(1, 120),
    body_cap=st.integers(200, 6000),
    batch_size=st.none() | st.integers(1, 200),
)
def test_batches_cover_every_label_once_within_the_limits(n, batch_cap, body_cap, batch_size):
    limits = posting.Limits(batch_labels=500, body_bytes=10**6)
    plan = posting.post_labels("/p/labels", limits, labels(n), batch_size, "base")
    result, calls = run(plan, server(batch_cap, body_cap))
    stored = [c for c in calls if len(json.loads(c.body)["labels"]) <= batch_cap  # type: ignore[arg-type]
              and len(c.body) <= body_cap]  # type: ignore[arg-type]  # fmt: skip
    places = [c.headers["Idempotency-Key"].removeprefix("base.") for c in stored]
    spans = [tuple(map(int, place.split("-"))) for place in places]
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))  # no gap, no overlap
    sent = [row["item"] for c in stored for row in json.loads(c.body)["labels"]]  # type: ignore[arg-type]
    assert sent == [f"i{k}" for k in range(n)]
    assert result.labels == result.inserted == n  # type: ignore[attr-defined]
    assert limits.batch_labels <= 500 and limits.body_bytes <= 10**6
    # the limits named by the 413s are learned: one refusal of each kind at most
    assert len(calls) - len(stored) <= 2


def test_the_same_labels_posted_again_get_the_same_keys() -> None:
    first = run(
        posting.post_labels("/p/labels", posting.Limits(), labels(25), 10, "k"), server(4, 10**6)
    )
    limits = posting.Limits()
    again = run(posting.post_labels("/p/labels", limits, labels(25), 10, "k"), server(4, 10**6))
    keys = [[c.headers["Idempotency-Key"] for c in calls] for _, calls in (first, again)]
    assert keys[0] == keys[1] and "k.0-10" in keys[0] and "k.0-4" in keys[0]


def test_a_refused_row_is_named_among_all_the_labels() -> None:
    def answer(call: Call) -> Reply:
        rows = json.loads(call.body or b"")["labels"]
        bad = [number for number, r in enumerate(rows, start=1) if r["label"] == "bad"]
        if bad:
            return _error(422, "labels_rejected", row=bad[0], field="label", message="unknown")
        return Reply(200, json.dumps({"inserted": len(rows), "duplicates": 0}).encode())

    rows = labels(30)
    rows[22] = {**rows[22], "label": "bad"}
    with pytest.raises(LabelsRejected) as caught:
        run(posting.post_labels("/p/labels", posting.Limits(), rows, 10, None), answer)
    assert caught.value.details()[0]["row"] == 23
    assert caught.value.stored.inserted == 20  # type: ignore[attr-defined]


def test_nan_and_bad_keys_are_refused_before_sending() -> None:
    row = {"item": 1, "rater": "r", "label": "a", "session": math.nan}
    with pytest.raises(LabelsRejected) as caught:
        run(posting.post_labels("/p/labels", posting.Limits(), [row], None, None), server(9, 999))
    assert caught.value.field == "session" and caught.value.details()[0]["row"] == 1
    for key in ("", "x" * 161, "has space"):
        with pytest.raises(Invalid):
            posting.key_base(key)
