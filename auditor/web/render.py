"""Jinja environment and the view models of the pages (figures drawn here, markup in
templates)."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from auditor import __version__
from auditor.services.queries.dashboard import ProjectDetail, RaterDetail
from auditor.services.reports.figures import (
    alert_timeline,
    format_measure,
    format_time,
    has_thresholds,
    history_chart,
    pair_heatmap,
    rater_sparkline,
    scope_color,
    scope_title,
    timeline_end,
)


class Renderer:
    def __init__(self) -> None:
        self.env = Environment(
            loader=PackageLoader("auditor.web", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["measure"] = format_measure
        self.env.filters["when"] = format_time
        self.env.globals["version"] = __version__
        self.env.globals["scope_title"] = scope_title
        self.env.globals["scope_color"] = scope_color
        self.env.globals["has_thresholds"] = has_thresholds

    def page(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    def project_page(self, detail: ProjectDetail) -> str:
        charts = [(history, Markup(history_chart(history))) for history in detail.charts]
        sparklines = {row.rater: Markup(rater_sparkline(row)) for row in detail.raters}
        heatmap = Markup(pair_heatmap(detail.pair_labels, detail.pairs)) if detail.pairs else None
        alerts = detail.card.alerts
        timeline = Markup(alert_timeline(alerts, timeline_end(detail))) if alerts.changes else None
        return self.page(
            "project.html",
            title=detail.card.name,
            detail=detail,
            card=detail.card,
            charts=charts,
            sparklines=sparklines,
            heatmap=heatmap,
            timeline=timeline,
        )

    def rater_page(self, detail: RaterDetail) -> str:
        charts = [(history, Markup(history_chart(history))) for history in detail.charts]
        return self.page(
            "rater.html",
            title=f"{detail.rater} in {detail.project.name}",
            detail=detail,
            card=detail.project,
            charts=charts,
            sparkline=Markup(rater_sparkline(detail.row)),
        )
