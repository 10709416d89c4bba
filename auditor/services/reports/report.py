"""The static report: one project's dashboard page as ONE self-contained HTML file (inline CSS
and SVG, no script, no external link), and the same figures as PNG files (matplotlib).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from auditor.services.queries.dashboard import ProjectDetail, project_detail
from auditor.services.reports.figures import (
    alert_timeline,
    format_time,
    history_chart,
    pair_heatmap,
    rater_sparkline,
    timeline_end,
)
from auditor.services.reports.template import TEMPLATE
from auditor.storage.unit_of_work import UnitOfWork


def load_report(uow: UnitOfWork, slug: str) -> ProjectDetail:
    return project_detail(uow, slug)


def now_utc() -> datetime:
    return datetime.now(UTC)


def _figures(detail: ProjectDetail) -> dict[str, Any]:
    alerts = detail.card.alerts
    return {
        "charts": [(h, history_chart(h)) for h in detail.charts],
        "sparklines": {row.rater: rater_sparkline(row) for row in detail.raters},
        "heatmap": pair_heatmap(detail.pair_labels, detail.pairs) if detail.pairs else None,
        "timeline": alert_timeline(alerts, timeline_end(detail)) if alerts.changes else None,
    }


def render_report(uow: UnitOfWork, slug: str, *, generated_at: datetime | None = None) -> str:
    """The project's report as one self-contained HTML document (inline CSS and SVG; no
    script, no external resource), readable offline and attachable to an e-mail."""
    detail = load_report(uow, slug)
    return TEMPLATE.render(
        detail=detail,
        card=detail.card,
        generated_at=format_time(generated_at or now_utc()),
        **_figures(detail),
    )
