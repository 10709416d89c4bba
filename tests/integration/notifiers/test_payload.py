from __future__ import annotations

import json
from datetime import datetime

import pytest

from tests.integration.notifiers.conftest import make_notification


def test_body_is_deterministic_compact_json_with_utc_times():
    a, b = make_notification(), make_notification()
    assert a.to_json_bytes() == b.to_json_bytes()
    body = json.loads(a.to_json_bytes())
    assert body["version"] == 1
    assert body["interval"] == {"low": 0.61, "high": 0.8}
    assert body["episode_started_at"] == "2026-03-02T09:00:00.000000Z"
    assert body["rule"] == {"id": "p1:default:rho", "severity": "warning",
                            "condition": "not_confidently_above"}  # fmt: skip
    assert b" " not in a.to_json_bytes().split(b'"reason"')[0]  # compact separators
    undefined = json.loads(make_notification(value=None, ci_low=None, ci_high=None).to_json_bytes())
    assert undefined["value"] is None and undefined["interval"] is None


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"kind": "pending"}, "kind"), ({"event_id": ""}, "event_id"),
     ({"value": float("nan")}, "value"),
     ({"occurred_at": datetime(2026, 1, 1)}, "occurred_at")],
)  # fmt: skip
def test_bad_notifications_are_refused(changes, field):
    with pytest.raises(ValueError, match=f"notification\\.{field}"):
        make_notification(**changes)


def test_a_stored_body_rebuilds_the_same_notification():
    from auditor.notifiers import Notification

    original = make_notification(note="data insufficient since ...")
    rebuilt = Notification.from_dict(json.loads(original.to_json_bytes()))
    assert rebuilt == original
    assert rebuilt.to_json_bytes() == original.to_json_bytes()  # retries are byte-identical
    with pytest.raises(ValueError, match="version"):
        Notification.from_dict({**original.to_dict(), "version": 2})
