"""The static report: the dashboard's project page as ONE self-contained HTML file (the same
template, rendered standalone: stylesheet inline, SVG inline, no script, no link), readable
offline and attachable to an e-mail. The PNG figures are ``auditor.presentation.report_png``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

from auditor.presentation.pages import Renderer
from auditor.services.queries.changes import Changes
from auditor.services.queries.dashboard import ProjectDetail


def render_report(
    detail: ProjectDetail,
    *,
    generated_at: datetime | None = None,
    changes: Changes | None = None,
) -> str:
    """The project's report (``detail`` from ``services.queries.dashboard.project_detail``)
    as one HTML document, stamped ``generated_at`` (default: now); with ``changes``
    (``services.queries.changes``), what changed since the previous report."""
    return _renderer().project_page(
        detail, generated_at=generated_at or datetime.now(UTC), changes=changes
    )


@cache
def _renderer() -> Renderer:
    # One environment per process: Jinja compiles each template once and keeps it.
    return Renderer()
