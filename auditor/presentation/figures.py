"""The dashboard's and the report's figures, drawn from the read services' values.

The dashboard's pages and the static report (``auditor.presentation.pages``) draw with these,
so the page and the file show the same pictures with the same legends.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from markupsafe import Markup

from auditor.charts import (
    THRESHOLDS,
    ChartPoint,
    ChartSeries,
    HeatCell,
    TimelineSpan,
    heatmap,
    line_chart,
    sparkline,
    timeline,
)
from auditor.services.queries.attention import Episode, natural_key
from auditor.services.queries.dashboard import (
    AlertView,
    MetricHistory,
    PairCell,
    Point,
    ProjectDetail,
    RaterRow,
)
from auditor.services.queries.reverts import RevertMark
from auditor.snapshots.scopes import CUMULATIVE
from auditor.stats.catalogue import BY_NAME, KRIPPENDORFF, LANDIS_KOCH, METRICS, bounds

SCOPE_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")


def scope_title(scope: str) -> str:
    return "cumulative" if scope == CUMULATIVE else f"last {scope[:-1]} days"


def scope_color(index: int) -> str:
    return SCOPE_COLORS[index % len(SCOPE_COLORS)]


def format_measure(measure: dict[str, Any] | None, digits: int = 3) -> str:
    """``0.659 [0.617, 0.701]``; ``undefined`` when there is no value (the reason is shown
    beside it by the caller)."""
    if not measure or measure.get("value") is None:
        return "undefined"
    text = f"{measure['value']:.{digits}f}"
    if measure.get("ci_low") is not None and measure.get("ci_high") is not None:
        text += f" [{measure['ci_low']:.{digits}f}, {measure['ci_high']:.{digits}f}]"
    return text


def format_time(moment: datetime | str | None) -> str:
    if moment is None:
        return "never"
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _chart_points(points: Sequence[Point]) -> tuple[ChartPoint, ...]:
    return tuple(ChartPoint(p.as_of, p.value, p.ci_low, p.ci_high, p.n, p.reason) for p in points)


# Reference lines in the vocabulary of the metric's card (its band in the catalogue), so a
# chart and its card never name one number with two scales: Landis-Koch's band edges on the
# kappa-like coefficients, Krippendorff's 0.667/0.800 on alpha and rho. Shares (self-agreement,
# reliability, observed agreement) are not chance-corrected: no lines. Unknown metrics: none.
REFERENCE_LINES: dict[str, tuple[tuple[float, str], ...]] = {
    LANDIS_KOCH: ((0.4, "0.40 moderate"), (0.6, "0.60 substantial"), (0.8, "0.80 almost perfect")),
    KRIPPENDORFF: THRESHOLDS,
}
THRESHOLD_METRICS = frozenset(m.name for m in METRICS if m.chance_corrected)
# The first snapshots of a young project carry wide intervals; they are drawn but do not set
# the y-range when a series has more than twice as many.
SETTLE = 3


def has_thresholds(metric: str) -> bool:
    return metric in THRESHOLD_METRICS


def thresholds_for(metric: str) -> tuple[tuple[float, str], ...]:
    """The reference lines of ``metric``'s chart, in its card's vocabulary."""
    found = BY_NAME.get(metric)
    if found is None or not found.chance_corrected:
        return ()
    return REFERENCE_LINES.get(found.band or "", ())


def vocabulary(metric: str) -> str | None:
    """The name of the scale its reference lines come from (for the page's one legend)."""
    found = BY_NAME.get(metric)
    return found.band if found is not None and thresholds_for(metric) else None


def value_bounds(metric: str) -> tuple[float, float]:
    """The range a metric can take (the catalogue's low and high), which the chart's axis does
    not pad past. An open end is infinite: the axis follows the data there. So agreement
    coefficients (floor not fixed: -1 for two raters, -1/(K-1) for others) and the
    repeatability split (repeatability in [0, K/(K-1)], K the project's categories) get an
    axis fitted to their values rather than a fixed -1..1 that would squash them or, for
    repeatability, cut off values above 1."""
    return bounds(metric)


def history_chart(
    history: MetricHistory, chart_id: str | None = None, reverts: Sequence[RevertMark] = ()
) -> str:
    """One metric over time: one line and band per scope, threshold lines, and a dotted line
    where an import was reverted."""
    series = [
        # Windows dashed and in another colour: over a young project they equal the
        # cumulative view and would hide it.
        ChartSeries(scope_title(s.scope), scope_color(i), _chart_points(s.points), dashed=i > 0)
        for i, s in enumerate(history.series)
    ]
    return line_chart(
        chart_id or history.metric,
        series,
        title=history.title,
        thresholds=thresholds_for(history.metric),
        bounds=value_bounds(history.metric),
        marks=chart_marks(reverts),
        settle=SETTLE,
    )


def legend_facts(histories: Sequence[MetricHistory]) -> dict[str, Any]:
    """What the page's one legend must explain about its charts: the scopes drawn, the
    reference-line vocabularies used, and whether any point is undefined."""
    scopes: list[str] = []
    for history in histories:
        for series in history.series:
            if series.scope not in scopes:
                scopes.append(series.scope)
    used = sorted({name for h in histories if (name := vocabulary(h.metric)) is not None})
    return {
        "scopes": scopes,
        "vocabularies": [(name, REFERENCE_LINES[name]) for name in used],
        "undefined": any(p.value is None for h in histories for s in h.series for p in s.points),
    }


def small_multiple(
    history: MetricHistory, episodes: Sequence[Episode], chart_id: str, until: datetime
) -> str:
    """A subject's small multiple on the attention list: one metric over the last weeks, her
    alert episodes shaded (one still open runs to ``until``), no reference lines (the page's
    legend explains the lines once)."""
    series = [
        ChartSeries(scope_title(s.scope), scope_color(i), _chart_points(s.points), dashed=i > 0)
        for i, s in enumerate(history.series)
    ]
    shaded = [
        (
            e.start,
            e.end or until,
            f"{e.rule.split(':', 1)[-1]} {e.state} from {format_time(e.start)}"
            + (f" to {format_time(e.end)}" if e.end else " (still)"),
        )
        for e in episodes
    ]
    return line_chart(
        chart_id,
        series,
        title=history.title,
        thresholds=(),
        bounds=value_bounds(history.metric),
        width=330,
        height=150,
        shaded=shaded,
    )


def chart_marks(reverts: Sequence[RevertMark]) -> list[tuple[datetime, str, str]]:
    """One mark per place on the charts: reverts that fell between the same two snapshots
    share it ("3 reverts"), instead of labels printed over each other."""
    placed: dict[datetime, list[RevertMark]] = {}
    for mark in reverts:
        if mark.chart_at is not None:
            placed.setdefault(mark.chart_at, []).append(mark)
    out = []
    for at, group in placed.items():
        if len(group) == 1:
            out.append((at, "revert", group[0].text))
            continue
        removed = sum(mark.labels for mark in group)
        text = f"{len(group)} imports reverted: {removed} label(s) removed"
        out.append((at, f"{len(group)} reverts", text))
    return out


def rater_sparkline(row: RaterRow) -> str:
    return sparkline(f"spark-{row.rater}", _chart_points(row.sparkline))


def pair_heatmap(labels: Sequence[str], pairs: Sequence[PairCell]) -> str:
    cells = [
        HeatCell(p.rater_a, p.rater_b, p.kappa.get("value"), p.n_items, p.kappa.get("reason"))
        for p in pairs
    ]
    return heatmap("cohen-heatmap", list(labels), cells)


def alert_spans(view: AlertView, until: datetime) -> list[TimelineSpan]:
    """Turn each lane's transitions into spans: a state holds from its change to the next
    change of the same lane (or ``until``, for the current state)."""
    by_lane: dict[str, list] = {}
    for change in sorted(view.changes, key=lambda c: c.at):
        # Rule ids are "<project>:<name>"; the page is the project's, so the name suffices.
        name = change.rule.split(":", 1)[-1]
        by_lane.setdefault(f"{name} {change.subject}".strip(), []).append(change)
    spans = []
    for lane, changes in by_lane.items():
        for current, following in zip(changes, [*changes[1:], None], strict=True):
            end = following.at if following is not None else max(until, current.at)
            detail = "" if current.value is None else f"value {current.value:.3f}"
            if current.reason:
                detail = f"{detail}; {current.reason}" if detail else current.reason
            spans.append(TimelineSpan(lane, current.to_state, current.at, end, detail))
    return spans


# An episode that ended within this long ago still counts as recent on the alert lanes.
RECENT_EPISODE = timedelta(days=14)


def lane_order(spans: Sequence[TimelineSpan], until: datetime) -> tuple[list[str], list[str]]:
    """(lanes to show, lanes to fold): lanes firing now first, then pending, then those with
    a firing or pending episode within ``RECENT_EPISODE``, then older episodes, each group
    naturally by name; lanes that never left "ok" (or insufficient data) are folded."""
    rank: dict[str, int] = {}
    for span in spans:
        current = span.end >= until
        if span.state == "firing" and current:
            level = 0
        elif span.state == "pending" and current:
            level = 1
        elif span.state in ("firing", "pending") and until - span.end <= RECENT_EPISODE:
            level = 2
        elif span.state in ("firing", "pending"):
            level = 3
        else:
            level = 9
        rank[span.lane] = min(rank.get(span.lane, 9), level)
    ordered = sorted(rank, key=lambda lane: (rank[lane], natural_key(lane)))
    return [x for x in ordered if rank[x] < 9], [x for x in ordered if rank[x] == 9]


def alert_timeline(view: AlertView, until: datetime) -> str:
    return timeline("alert-timeline", alert_spans(view, until))


def alert_timelines(view: AlertView, until: datetime) -> tuple[str | None, str | None, int]:
    """The alert lanes with an episode (firing now and recent first) and, apart, the lanes
    that stayed ok (folded on the page), and how many those are."""
    spans = alert_spans(view, until)
    shown, folded = lane_order(spans, until)
    first = [s for lane in shown for s in spans if s.lane == lane]
    rest = [s for lane in folded for s in spans if s.lane == lane]
    return (
        timeline("alert-timeline", first) if first else None,
        timeline("alert-timeline-ok", rest) if rest else None,
        len(folded),
    )


def timeline_end(detail: ProjectDetail) -> datetime:
    """The right end of the alert timeline: the latest snapshot's clock, not the wall clock
    (a project measured on simulated or past time would otherwise be squeezed to the left)."""
    times = [c.at for c in detail.card.alerts.changes]
    if detail.card.as_of is not None:
        times.append(detail.card.as_of)
    return max(times)


# What a band means to a reader, in plain words (the cards' scales: Landis-Koch for the
# kappa-like coefficients, Krippendorff for alpha and rho).
BAND_MEANING = {
    "poor": "the raters agree less than chance would make them",
    "slight": "the raters agree barely more than chance",
    "fair": "the raters agree somewhat beyond chance; not enough to rely on the labels",
    "moderate": "the raters agree clearly beyond chance, but often disagree",
    "substantial": "the raters agree well beyond chance",
    "almost perfect": "the raters agree nearly always beyond what chance explains",
    "unacceptable": "too unreliable to draw conclusions from the labels",
    "tentative": "reliable enough for tentative conclusions only",
    "acceptable": "reliable enough to draw conclusions from the labels",
}


def headline_sentence(label: str, measure: dict[str, Any] | None, scale: str | None) -> str | None:
    """ "kappa_S 0.692 [0.654, 0.731]: substantial (Landis-Koch): the raters agree well beyond
    chance; ..." for the first headline card, or None when it is undefined."""
    if not measure or measure.get("value") is None or not measure.get("band"):
        return None
    band = str(measure["band"])
    scale_name = f" on {scale}'s scale" if scale else ""
    meaning = BAND_MEANING.get(band, "")
    text = f"{label} {format_measure(measure)}: {band}{scale_name}"
    return f"{text}: {meaning}." if meaning else f"{text}."


def measure_html(m: dict[str, Any] | None) -> Markup:
    """A measure cell: the value with its interval, n, band and any missing interval's reason
    in the tooltip; "undefined: why"; "not measured". The ``measure`` macro of
    ``macros.html`` in Python: a page of 200 raters renders thousands of them."""
    if m and m.get("value") is not None:
        title = f"n = {m['n']}" if m.get("n") is not None else ""
        if m.get("band"):
            title += f"; {m['band']}"
        if m.get("ci_reason") and m.get("ci_low") is None:
            title += f"; no interval: {m['ci_reason']}"
        return Markup('<span title="{}">{}</span>').format(title, format_measure(m))
    if m:
        reason = m.get("reason")
        return Markup('<span class="undefined" title="{}">undefined{}</span>').format(
            reason or "undefined", f": {reason}" if reason else ""
        )
    return Markup('<span class="undefined">not measured</span>')
