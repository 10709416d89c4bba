"""The static report: one project's dashboard page as ONE self-contained HTML file (inline CSS
and SVG, no script, no external link), and the same figures as PNG files (matplotlib).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from auditor.services.dashboard import ProjectDetail, project_detail
from auditor.storage.unit_of_work import UnitOfWork


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


def load_report(uow: UnitOfWork, slug: str) -> ProjectDetail:
    return project_detail(uow, slug)


def now_utc() -> datetime:
    return datetime.now(UTC)
