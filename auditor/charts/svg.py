"""Small SVG charts: time series with interval bands and threshold lines, sparklines, a
heatmap and a timeline. Output is markup text; callers mark it safe when templating.

Design choices, and why:
- Attributes carry the colours (no stylesheet needed), so the same SVG works inline in the
  dashboard, in a self-contained report file, and opened on its own.
- Undefined values (None, with a reason) are drawn as hollow markers on the x axis at their
  own times and break the line: a gap says "not measurable here", which a zero would hide
  (a run of them is one capsule, ``auditor.charts.undefined``).
- Intervals that leave the plotted range are clipped to it; the tooltip keeps the true ends.
- The value range fits what is drawn (``auditor.charts.scale``); reference lines are labelled
  in the right margin, outside the plot, so no line or point can cover their labels; time
  ticks are spaced by the width of their labels, so labels never overprint.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from html import escape

from auditor.charts.scale import label_width, time_ticks, y_domain, y_ticks
from auditor.charts.undefined import undefined_markers
from auditor.charts.values import ChartPoint, ChartSeries, HeatCell

# Krippendorff's conventions: accept data at alpha >= 0.800, tentative conclusions >= 0.667.
THRESHOLDS: tuple[tuple[float, str], ...] = (
    (0.667, "0.667 tentative"),
    (0.800, "0.800 acceptable"),
)

# The right margin holds the reference-line labels ("0.800 acceptable"), clear of the data.
_PAD_LEFT, _PAD_RIGHT, _PAD_TOP, _PAD_BOTTOM = 48, 112, 12, 28
# The first and last times sit this far in from the plot's ends: a marker there (an undefined
# point on the axis) stays clear of the value labels left of the plot and of the margin.
_INSET = 12
_REFERENCE = "#b22222"
# Above this many defined points a series is drawn as its line and band only: a marker (and
# tooltip) per point would cost more bytes than the rest of the page and not be told apart.
DOT_LIMIT = 80
# A sparkline marks its points up to this many, then only its last one.
SPARK_DOT_LIMIT = 30
_MARK = "#555555"
_AXIS = "#888"
_GRID = "#e5e5e5"


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _tooltip(series: str, point: ChartPoint) -> str:
    parts = [f"{series} {point.at.strftime('%Y-%m-%d %H:%M')} UTC: {_fmt(point.value)}"]
    if point.value is not None and point.ci_low is not None and point.ci_high is not None:
        parts.append(f"interval {_fmt(point.ci_low)} to {_fmt(point.ci_high)}")
    if point.n is not None:
        parts.append(f"n = {point.n}")
    if point.reason:
        parts.append(point.reason)
    return "; ".join(parts)


class _Frame:
    """Maps times and values to pixels inside the padded plot area."""

    def __init__(
        self, width: int, height: int, times: list[datetime], y: tuple, inset: float = 0.0
    ) -> None:
        self.width, self.height = width, height
        self.t0 = min(times).timestamp() if times else 0.0
        self.t1 = max(times).timestamp() if times else 1.0
        self.y0, self.y1 = y
        self.inner_w = width - _PAD_LEFT - _PAD_RIGHT
        self.inner_h = height - _PAD_TOP - _PAD_BOTTOM
        # Times map to [left, left + span]: ``inset`` px in from both ends of the plot.
        self.left = _PAD_LEFT + inset
        self.span = self.inner_w - 2 * inset

    def x(self, moment: datetime) -> float:
        if self.t1 == self.t0:
            return _PAD_LEFT + self.inner_w / 2
        return self.left + (moment.timestamp() - self.t0) / (self.t1 - self.t0) * self.span

    def y(self, value: float) -> float:
        clipped = min(max(value, self.y0), self.y1)
        return _PAD_TOP + (self.y1 - clipped) / (self.y1 - self.y0) * self.inner_h

    @property
    def bottom(self) -> float:
        return _PAD_TOP + self.inner_h


def _axes(frame: _Frame, times: list[datetime]) -> list[str]:
    out = []
    ticks, decimals = y_ticks(frame.y0, frame.y1)
    for tick in ticks:
        y = frame.y(tick)
        out.append(
            f'<line x1="{_PAD_LEFT}" y1="{y:.1f}" x2="{frame.width - _PAD_RIGHT}" y2="{y:.1f}" '
            f'stroke="{_GRID}"/><text x="{_PAD_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" '
            f'font-size="11" fill="#555">{tick:.{decimals}f}</text>'
        )
    out.append(
        f'<line x1="{_PAD_LEFT}" y1="{frame.bottom:.1f}" x2="{frame.width - _PAD_RIGHT}" '
        f'y2="{frame.bottom:.1f}" stroke="{_AXIS}"/>'
    )
    if times:
        for moment, label in time_ticks(min(times), max(times), frame.span):
            x = frame.x(moment)
            half = label_width(label) / 2
            if x - half < 0 or x + half > frame.width:
                continue  # a label that would leave the chart is left out, not cut
            out.append(
                f'<line x1="{x:.1f}" y1="{frame.bottom:.1f}" x2="{x:.1f}" '
                f'y2="{frame.bottom + 4:.1f}" stroke="{_AXIS}"/><text x="{x:.1f}" '
                f'y="{frame.bottom + 17:.1f}" text-anchor="middle" font-size="11" '
                f'fill="#555">{escape(label)}</text>'
            )
    return out


def _references(frame: _Frame, thresholds: Sequence[tuple[float, str]]) -> list[str]:
    """Dashed reference lines across the plot, each labelled in the right margin; labels
    closer than a line of text are pushed apart."""
    out: list[str] = []
    placed: list[float] = []
    for value, label in sorted(thresholds):
        y = frame.y(value)
        text_y = y + 3.5
        if placed and placed[-1] - text_y < 12:
            text_y = placed[-1] - 12
        placed.append(text_y)
        out.append(
            f'<line data-threshold="{value}" x1="{_PAD_LEFT}" y1="{y:.1f}" '
            f'x2="{frame.width - _PAD_RIGHT}" y2="{y:.1f}" stroke="{_REFERENCE}" '
            f'stroke-dasharray="3 4" stroke-width="1"/><text data-threshold-label="{value}" '
            f'x="{frame.width - _PAD_RIGHT + 4}" y="{max(text_y, 10):.1f}" font-size="10" '
            f'fill="{_REFERENCE}">{escape(label)}</text>'
        )
    return out


def _marks(
    frame: _Frame, times: list[datetime], marks: Sequence[tuple[datetime, str, str]]
) -> list[str]:
    """A grey dotted vertical line per mark inside the time range, labelled at its top."""
    if not times:
        return []
    first, last = min(times), max(times)
    out = []
    for moment, label, text in marks:
        if not first <= moment <= last:
            continue
        x = frame.x(moment)
        out.append(
            f'<g data-mark="{moment.isoformat()}"><title>{escape(text)}</title>'
            f'<line x1="{x:.1f}" y1="{_PAD_TOP}" x2="{x:.1f}" y2="{frame.bottom:.1f}" '
            f'stroke="{_MARK}" stroke-dasharray="1 3" stroke-width="1.5"/>'
            f'<text x="{x + 3:.1f}" y="{_PAD_TOP + 9}" font-size="9" fill="{_MARK}">'
            f"{escape(label)}</text>"
            "</g>"
        )
    return out


def _shades(
    frame: _Frame, times: list[datetime], spans: Sequence[tuple[datetime, datetime, str]]
) -> list[str]:
    """A light red rectangle behind the data per span (an alert episode), clipped to the
    time range drawn; its tooltip says what it is."""
    if not times:
        return []
    first, last = min(times), max(times)
    out = []
    for start, end, text in spans:
        if end < first or start > last:
            continue
        x0, x1 = frame.x(max(start, first)), frame.x(min(end, last))
        out.append(
            f'<rect data-shade="{start.isoformat()}" x="{x0:.1f}" y="{_PAD_TOP}" '
            f'width="{max(x1 - x0, 2.0):.1f}" height="{frame.bottom - _PAD_TOP:.1f}" '
            f'fill="{_REFERENCE}" fill-opacity="0.12"><title>{escape(text)}</title></rect>'
        )
    return out


def _band(frame: _Frame, series: ChartSeries) -> list[str]:
    """One polygon per run of consecutive points that all have an interval."""
    runs: list[list[tuple[datetime, float, float]]] = [[]]  # (at, ci_low, ci_high)
    for p in series.points:
        if p.value is not None and p.ci_low is not None and p.ci_high is not None:
            runs[-1].append((p.at, p.ci_low, p.ci_high))
        elif runs[-1]:
            runs.append([])
    out = []
    for run in runs:
        if not run:
            continue
        if len(run) == 1:  # a lone interval: a short vertical bar
            at, low, high = run[0]
            x = frame.x(at)
            out.append(
                f'<line data-band="{escape(series.name)}" x1="{x:.1f}" x2="{x:.1f}" '
                f'y1="{frame.y(low):.1f}" y2="{frame.y(high):.1f}" '
                f'stroke="{series.color}" stroke-opacity="0.35" stroke-width="6"/>'
            )
            continue
        upper = [f"{frame.x(at):.1f},{frame.y(high):.1f}" for at, _, high in run]
        lower = [f"{frame.x(at):.1f},{frame.y(low):.1f}" for at, low, _ in reversed(run)]
        out.append(
            f'<polygon data-band="{escape(series.name)}" points="{" ".join(upper + lower)}" '
            f'fill="{series.color}" fill-opacity="0.15" stroke="none"/>'
        )
    return out


def _line_and_points(frame: _Frame, series: ChartSeries, chart_id: str) -> list[str]:
    out = []
    segments: list[list[str]] = [[]]
    for p in series.points:
        if p.value is None:
            if segments[-1]:
                segments.append([])
            continue
        segments[-1].append(f"{frame.x(p.at):.1f},{frame.y(p.value):.1f}")
    dash = ' stroke-dasharray="7 4"' if series.dashed else ""
    for segment in segments:
        if len(segment) > 1:
            out.append(
                f'<polyline points="{" ".join(segment)}" fill="none" stroke="{series.color}" '
                f'stroke-width="2"{dash}/>'
            )

    def common(p: ChartPoint) -> str:
        return (
            f'data-point="{escape(chart_id)}" data-series="{escape(series.name)}" '
            f'data-time="{p.at.isoformat()}"'
        )

    dense = sum(p.value is not None for p in series.points) > DOT_LIMIT
    for p in series.points:
        if p.value is not None and not dense:
            out.append(
                f'<circle {common(p)} data-value="{p.value:.6g}" cx="{frame.x(p.at):.1f}" '
                f'cy="{frame.y(p.value):.1f}" r="3" fill="{series.color}"><title>'
                f"{escape(_tooltip(series.name, p))}</title></circle>"
            )
    out.extend(
        undefined_markers(
            series.points,
            lambda p: frame.x(p.at),
            frame.bottom,
            common,
            lambda p: _tooltip(series.name, p),
            series.name,
        )
    )
    return out


def line_chart(
    chart_id: str,
    series: Sequence[ChartSeries],
    *,
    title: str = "",
    thresholds: Sequence[tuple[float, str]] = THRESHOLDS,
    bounds: tuple[float, float] = (-1.0, 1.0),
    width: int = 640,
    height: int = 240,
    marks: Sequence[tuple[datetime, str, str]] = (),
    shaded: Sequence[tuple[datetime, datetime, str]] = (),
    settle: int = 0,
) -> str:
    """A time-series chart: one line per series (dashed ones for rolling windows), its
    interval as a shaded band, reference lines, and a marker per point (hollow on the axis
    when undefined). The value range fits the points and their intervals; a reference line
    that would flatten the data is left out (``data-thresholds`` lists those drawn).
    ``marks``: (moment, label, tooltip) to mark with a vertical line (an import reverted), drawn
    when they fall between the first and the last point. ``shaded``: (start, end, tooltip)
    spans shaded behind the data (an alert's episodes). ``settle``: the first points of each
    series are drawn but do not set the value range when the series has more than twice as
    many (a young project's first snapshots carry wide intervals that would flatten the rest).
    """
    times = [p.at for s in series for p in s.points]
    values = [
        v
        for s in series
        for p in (s.points[settle:] if len(s.points) > 2 * settle else s.points)
        if p.value is not None
        for v in (p.value, p.ci_low, p.ci_high)
        if v is not None
    ]
    low, high, shown = y_domain(values, [t for t, _ in thresholds], bounds)
    drawn = [(t, label) for t, label in thresholds if t in shown]
    frame = _Frame(width, height, times, (low, high), inset=_INSET)
    total = sum(len(s.points) for s in series)
    defined = sum(1 for s in series for p in s.points if p.value is not None)
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{escape(chart_id)}" '
        f'data-points="{total}" data-defined="{defined}" '
        f'data-thresholds="{" ".join(f"{t:g}" for t, _ in drawn)}" '
        f'data-y-range="{low:.4f} {high:.4f}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(title or chart_id)}">',
        f"<title>{escape(title or chart_id)}</title>",
        *_shades(frame, times, shaded),
        *_axes(frame, times),
        *_references(frame, drawn),
        *_marks(frame, times, marks),
    ]
    for s in series:
        body.extend(_band(frame, s))
    for s in series:
        body.extend(_line_and_points(frame, s, chart_id))
    if not times:
        body.append(
            f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" '
            f'font-size="13" fill="#777">no snapshots yet</text>'
        )
    body.append("</svg>")
    return "".join(body)


def sparkline(
    chart_id: str, points: Sequence[ChartPoint], *, width: int = 120, height: int = 28
) -> str:
    """A tiny line of the defined values (scaled 0..1, values outside clipped), no axes."""
    defined = [(p, p.value) for p in points if p.value is not None]
    frame = _Frame(
        width + _PAD_LEFT + _PAD_RIGHT - 4,
        height + _PAD_TOP + _PAD_BOTTOM - 4,
        [p.at for p, _ in defined],
        (min([0.0, *(value for _, value in defined)]), 1.0),
    )
    shift_x, shift_y = _PAD_LEFT - 2, _PAD_TOP - 2
    coordinates = [(frame.x(p.at) - shift_x, frame.y(value) - shift_y, p) for p, value in defined]
    body = [
        '<svg xmlns="http://www.w3.org/2000/svg" class="sparkline" '
        f'data-chart="{escape(chart_id)}" '
        f'data-points="{len(defined)}" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}">'
    ]
    if len(coordinates) > 1:
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in coordinates)
        body.append(f'<polyline points="{line}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    marked = coordinates if len(coordinates) <= SPARK_DOT_LIMIT else coordinates[-1:]
    for x, y, p in marked:
        body.append(
            f'<circle data-point="{escape(chart_id)}" data-value="{p.value:.6g}" '
            f'data-time="{p.at.isoformat()}" cx="{x:.1f}" cy="{y:.1f}" r="1.6" fill="#1f77b4">'
            f"<title>{escape(_tooltip('', p).strip())}</title></circle>"
        )
    if not coordinates:
        body.append(
            f'<text x="{width / 2:.0f}" y="{height / 2 + 4:.0f}" text-anchor="middle" '
            f'font-size="10" fill="#999">no values</text>'
        )
    body.append("</svg>")
    return "".join(body)


def _heat_color(value: float | None) -> str:
    """White at 0 or below, through yellow to dark green at 1; grey when undefined."""
    if value is None:
        return "#eeeeee"
    t = min(max(value, 0.0), 1.0)
    stops = ((0.0, (255, 255, 255)), (0.5, (255, 224, 130)), (1.0, (27, 120, 55)))
    for (a, ca), (b, cb) in itertools.pairwise(stops):
        if t <= b:
            f = (t - a) / (b - a)
            rgb = tuple(round(x + (y - x) * f) for x, y in zip(ca, cb, strict=True))
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#1b7837"


def heatmap(
    chart_id: str, labels: Sequence[str], cells: Sequence[HeatCell], *, cell: int = 34
) -> str:
    """A symmetric rater-by-rater matrix; each given cell is drawn in both halves."""
    by_pair = {}
    for c in cells:
        by_pair[(c.row, c.column)] = c
        by_pair[(c.column, c.row)] = c
    # Column names stand vertical: diagonal ones of long names run into each other.
    margin = 12 + 7.2 * max((len(x) for x in labels), default=1)
    size = round(margin + cell * len(labels) + 4)
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" data-chart="{escape(chart_id)}" '
        f'data-cells="{len(cells)}" viewBox="0 0 {size} {size}" width="{size}" height="{size}">'
    ]
    for i, name in enumerate(labels):
        offset = margin + i * cell + cell / 2
        body.append(
            f'<text x="{margin - 6:.1f}" y="{offset + 4:.1f}" text-anchor="end" font-size="11">'
            f'{escape(name)}</text><text x="{offset + 4:.1f}" y="{margin - 6:.1f}" '
            f'text-anchor="start" font-size="11" '
            f'transform="rotate(-90 {offset + 4:.1f} {margin - 6:.1f})">{escape(name)}</text>'
        )
    for i, row in enumerate(labels):
        for j, column in enumerate(labels):
            x, y = round(margin + j * cell, 1), round(margin + i * cell, 1)
            found = by_pair.get((row, column))
            if i == j or found is None:
                tip = "" if i == j else f"{row} and {column}: no items in common"
                body.append(
                    f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" fill="#f7f7f7">'
                    f"<title>{escape(tip)}</title></rect>"
                )
                continue
            tip = f"Cohen's kappa {row} and {column}: {_fmt(found.value)}"
            if found.n is not None:
                tip += f" on {found.n} shared items"
            if found.reason:
                tip += f"; {found.reason}"
            text = "–" if found.value is None else f"{found.value:.2f}"
            ink = "white" if found.value is not None and found.value > 0.75 else "#222"
            body.append(
                f'<g data-cell="{escape(row)}|{escape(column)}" data-value="'
                f'{"" if found.value is None else f"{found.value:.6g}"}"><rect x="{x}" y="{y}" '
                f'width="{cell - 1}" height="{cell - 1}" fill="{_heat_color(found.value)}"/>'
                f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" '
                f'font-size="10" fill="{ink}">{text}</text><title>{escape(tip)}</title></g>'
            )
    body.append("</svg>")
    return "".join(body)
