"""Undefined points of a line chart: markers on the x axis, each at its own time.

A lone undefined point is a hollow circle on the axis. A run of undefined points (the first
snapshots of a project often cannot measure self-agreement yet) would be a chain of circles
overprinting each other, so a run is one hollow capsule spanning it, with a small dot at
each point's time inside (the dot is the point's element: tooltip and ``data-*`` contract).
The window and cumulative series are often undefined at the same times; their capsules and
dots then coincide exactly instead of overprinting at an offset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from auditor.charts.values import ChartPoint

COLOR = "#999"
RADIUS = 3.5  # a lone marker
DOT = 1.5  # a point inside a run


def _runs(points: Sequence[ChartPoint]) -> list[list[int]]:
    """Indexes of consecutive undefined points of one series."""
    runs: list[list[int]] = []
    previous = -2
    for index, point in enumerate(points):
        if point.value is not None:
            continue
        if index == previous + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
        previous = index
    return runs


def undefined_markers(
    points: Sequence[ChartPoint],
    x: Callable[[ChartPoint], float],
    axis_y: float,
    attributes: Callable[[ChartPoint], str],
    tooltip: Callable[[ChartPoint], str],
    series: str,
) -> list[str]:
    """The markers of the undefined points of one series; ``attributes`` gives a point's
    ``data-*`` attributes and ``tooltip`` its title."""
    out = []
    for run in _runs(points):
        xs = [x(points[i]) for i in run]
        if len(run) > 1:
            reasons = sorted({points[i].reason for i in run if points[i].reason})
            first, last = points[run[0]].at, points[run[-1]].at
            title = (
                f"{series}: undefined at {len(run)} points, {first:%Y-%m-%d %H:%M} to "
                f"{last:%Y-%m-%d %H:%M} UTC" + (f"; {'; '.join(reasons)}" if reasons else "")
            )
            out.append(
                f'<rect data-undefined-run="{escape(series)}" x="{xs[0] - RADIUS:.1f}" '
                f'y="{axis_y - RADIUS:.1f}" width="{xs[-1] - xs[0] + 2 * RADIUS:.1f}" '
                f'height="{2 * RADIUS:.1f}" rx="{RADIUS}" fill="white" stroke="{COLOR}">'
                f"<title>{escape(title)}</title></rect>"
            )
        radius, fill = (RADIUS, "white") if len(run) == 1 else (DOT, COLOR)
        for i, at_x in zip(run, xs, strict=True):
            point = points[i]
            out.append(
                f'<circle {attributes(point)} data-value="" '
                f'data-reason="{escape(point.reason or "")}" cx="{at_x:.1f}" '
                f'cy="{axis_y:.1f}" r="{radius}" fill="{fill}" stroke="{COLOR}" '
                f'stroke-width="{1 if len(run) == 1 else 0}"><title>'
                f"{escape(tooltip(point))}</title></circle>"
            )
    return out
