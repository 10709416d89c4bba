"""The alert timeline: one lane per rule and subject, coloured spans for its states.

Drawn on a wide canvas (1200 units) that scales to the width of the page, with a lane per row
(alternating shade), the lane names in a left column sized to them, a legend of the states
present, and time ticks spaced by their labels' width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

from auditor.charts.scale import label_width, time_ticks

STATE_COLORS = {
    "firing": "#d62728",
    "pending": "#ff9f1c",
    "ok": "#2ca02c",
    "insufficient_data": "#9e9e9e",
    "silenced": "#6a5acd",
}
_LANE_FONT = 12
_LEGEND_HEIGHT = 22
_AXIS_HEIGHT = 24


@dataclass(frozen=True)
class TimelineSpan:
    """A state held by one lane (e.g. one alert rule and subject) from ``start`` to ``end``."""

    lane: str
    state: str
    start: datetime
    end: datetime
    detail: str = ""


def _fit(text: str, width: float, font: float) -> str:
    """``text`` cut (with an ellipsis) to fit ``width`` pixels at ``font``."""
    if label_width(text, font) <= width:
        return text
    keep = max(1, int(width / label_width("x", font)) - 1)
    return text[:keep] + "…"


def _legend(states: list[str], width: int) -> list[str]:
    out, x = [], 8.0
    for state in states:
        text, color = state.replace("_", " "), STATE_COLORS.get(state, "#777")
        out.append(
            f'<rect x="{x:.1f}" y="5" width="12" height="12" fill="{color}"/>'
            f'<text x="{x + 16:.1f}" y="15" font-size="11" fill="#333">{escape(text)}</text>'
        )
        x += 16 + label_width(text) + 18
        if x > width - 40:
            break
    return out


def timeline(
    chart_id: str, spans: Sequence[TimelineSpan], *, width: int = 1200, lane_height: int = 24
) -> str:
    """One lane per alert rule and subject; coloured spans show the state over time."""
    # lanes in the order given (the caller puts firing and recent episodes first)
    lanes = list(dict.fromkeys(s.lane for s in spans))
    widest = max((label_width(x, _LANE_FONT) for x in lanes), default=40.0)
    label_w = min(widest, width * 0.35) + 16
    top = _LEGEND_HEIGHT + 4
    height = top + lane_height * max(len(lanes), 1) + _AXIS_HEIGHT
    times = [s.start for s in spans] + [s.end for s in spans]
    t0 = min(times).timestamp() if times else 0.0
    t1 = max(times).timestamp() if times else 1.0
    inner = width - label_w - 12

    def x(moment: datetime) -> float:
        return label_w + (moment.timestamp() - t0) / ((t1 - t0) or 1.0) * inner

    states = [s for s in STATE_COLORS if any(span.state == s for span in spans)]
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" data-chart="{escape(chart_id)}" '
        f'data-spans="{len(spans)}" data-lanes="{len(lanes)}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" style="width: 100%; height: auto" '
        f'preserveAspectRatio="xMinYMin meet">',
        *_legend(states, width),
    ]
    for i, lane in enumerate(lanes):
        y = top + i * lane_height
        if i % 2 == 0:
            body.append(
                f'<rect x="0" y="{y}" width="{width}" height="{lane_height}" fill="#f6f7f9"/>'
            )
        body.append(
            f'<text data-lane="{escape(lane)}" x="{label_w - 8:.1f}" '
            f'y="{y + lane_height / 2 + 4:.1f}" text-anchor="end" font-size="{_LANE_FONT}">'
            f"{escape(_fit(lane, label_w - 16, _LANE_FONT))}<title>{escape(lane)}</title></text>"
        )
    for s in spans:
        y = top + lanes.index(s.lane) * lane_height
        left, right = x(s.start), x(s.end)
        tip = f"{s.lane}: {s.state} from {s.start:%Y-%m-%d %H:%M} to {s.end:%Y-%m-%d %H:%M} UTC" + (
            f"; {s.detail}" if s.detail else ""
        )
        body.append(
            f'<rect data-span="{escape(s.state)}" x="{left:.1f}" y="{y + 4}" '
            f'width="{max(right - left, 2):.1f}" height="{lane_height - 8}" '
            f'fill="{STATE_COLORS.get(s.state, "#777")}"><title>{escape(tip)}</title></rect>'
        )
    axis_y = top + lane_height * max(len(lanes), 1)
    body.append(
        f'<line x1="{label_w:.1f}" y1="{axis_y}" x2="{label_w + inner:.1f}" y2="{axis_y}" '
        'stroke="#888"/>'
    )
    if times:
        for moment, text in time_ticks(min(times), max(times), inner):
            at = x(moment)
            if at - label_width(text) / 2 < label_w - 4 or at + label_width(text) / 2 > width:
                continue
            body.append(
                f'<line x1="{at:.1f}" y1="{axis_y}" x2="{at:.1f}" y2="{axis_y + 4}" '
                f'stroke="#888"/><text x="{at:.1f}" y="{axis_y + 17}" text-anchor="middle" '
                f'font-size="11" fill="#555">{escape(text)}</text>'
            )
    body.append("</svg>")
    return "".join(body)
