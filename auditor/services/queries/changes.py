"""What changed since the previous report (``auditor report PROJECT --since 7d``, issue 27):
the headline measures then and now, raters who arrived or left, and the alert episodes that
began or ended in the period. Plain values; the report template words them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from auditor.services.queries.attention import natural_key
from auditor.services.queries.dashboard import ProjectDetail
from auditor.snapshots.scopes import CUMULATIVE
from auditor.stats.catalogue import headline
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class MeasureChange:
    metric: str
    label: str
    before: dict[str, Any] | None
    now: dict[str, Any] | None

    @property
    def delta(self) -> float | None:
        a, b = (self.before or {}).get("value"), (self.now or {}).get("value")
        return None if a is None or b is None else float(b) - float(a)

    @property
    def clear(self) -> bool:
        """The two intervals do not overlap: the change is not noise."""
        a, b = self.before or {}, self.now or {}
        if None in (a.get("ci_low"), a.get("ci_high"), b.get("ci_low"), b.get("ci_high")):
            return False
        return bool(b["ci_low"] > a["ci_high"] or b["ci_high"] < a["ci_low"])


@dataclass(frozen=True)
class Changes:
    since: datetime  # the start of the period
    before_as_of: datetime | None  # the snapshot compared with (None: none that old)
    measures: tuple[MeasureChange, ...]
    arrived: tuple[str, ...]
    left: tuple[str, ...]
    began: tuple[Any, ...]  # AlertChange into firing within the period
    ended: tuple[Any, ...]  # AlertChange from firing to ok within the period


def changes_since(uow: UnitOfWork, detail: ProjectDetail, period: timedelta) -> Changes | None:
    """Compare the latest cumulative snapshot of ``detail`` with the one ``period`` earlier
    (measured at or before then). None when the project has no snapshot."""
    if detail.card.as_of is None or not detail.latest:
        return None
    start = detail.card.as_of - period
    with uow:
        project_id = uow.require_project(detail.card.slug).id
        found = uow.snapshots.snapshot_parts_at(
            project_id, CUMULATIVE, start, ("measures", "raters", "models")
        )
        before_as_of = None
        if found is not None:
            meta = uow.snapshots.snapshot_at(project_id, CUMULATIVE, start)
            before_as_of = meta["as_of"] if meta else None
    before = (found or {}).get("result", {})
    now_measures = detail.latest.get("measures", {})
    old_measures = before.get("measures", {})
    ordinal = detail.latest.get("scale") == "ordinal"
    measures = tuple(
        MeasureChange(m.name, m.short, old_measures.get(m.name), now_measures.get(m.name))
        for m in headline()
        if (not m.ordinal or ordinal) and m.name in now_measures
    )
    now_raters = set(detail.latest.get("raters", {})) | set(detail.latest.get("models", {}))
    old_raters = set(before.get("raters", {})) | set(before.get("models", {}))
    changes = [c for c in detail.card.alerts.changes if c.at >= start]
    return Changes(
        since=start,
        before_as_of=before_as_of,
        measures=measures,
        arrived=tuple(sorted(now_raters - old_raters, key=natural_key)) if found else (),
        left=tuple(sorted(old_raters - now_raters, key=natural_key)) if found else (),
        began=tuple(c for c in changes if c.to_state == "firing" and c.from_state != "firing"),
        ended=tuple(c for c in changes if c.from_state == "firing" and c.to_state != "firing"),
    )
