"""Charts as inline SVG, in pure Python (standard library only).

Shared by the dashboard (``auditor.web``) and the static report
(``auditor.presentation.report``), so both draw the same pictures; it sits below the
services so either may import it.

Every chart is one ``<svg>`` element whose ``data-chart`` names it and whose ``data-points``
counts the points drawn; every point carries ``data-point``, ``data-series``, ``data-value``
and ``data-time``, so browser tests can count and read them without parsing geometry.
"""

from auditor.charts.svg import THRESHOLDS, heatmap, line_chart, sparkline
from auditor.charts.timeline import TimelineSpan, timeline
from auditor.charts.values import ChartPoint, ChartSeries, HeatCell

__all__ = [
    "THRESHOLDS",
    "ChartPoint",
    "ChartSeries",
    "HeatCell",
    "TimelineSpan",
    "heatmap",
    "line_chart",
    "sparkline",
    "timeline",
]
