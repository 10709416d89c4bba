"""Alert lanes by concern (issue 27): firing now, then pending, then recent episodes, then old
ones; lanes that never fired are folded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.charts import TimelineSpan
from auditor.presentation.figures import lane_order

NOW = datetime(2026, 11, 27, tzinfo=UTC)


def span(lane: str, state: str, days_ago_start: float, days_ago_end: float) -> TimelineSpan:
    return TimelineSpan(
        lane, state, NOW - timedelta(days=days_ago_start), NOW - timedelta(days=days_ago_end), ""
    )


def test_firing_then_pending_then_recent_then_old_and_ok_lanes_folded() -> None:
    spans = [
        span("drop r10", "ok", 30, 0),
        span("drop r2", "firing", 40, 35),  # long ago
        span("drop r2", "ok", 35, 0),
        span("drop r07", "firing", 9, 4),  # last week's episode
        span("drop r07", "ok", 4, 0),
        span("kappa_s", "pending", 1, 0),
        span("drop r11", "firing", 2, 0),
        span("drop r3", "insufficient_data", 30, 0),
    ]
    shown, folded = lane_order(spans, NOW)
    assert shown == ["drop r11", "kappa_s", "drop r07", "drop r2"]
    assert folded == ["drop r3", "drop r10"]
