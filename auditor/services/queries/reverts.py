"""Where the history marks a revert: each reverted import, placed on the charts' time axis.

Snapshots are plotted at ``as_of`` (the clock they were computed for, simulated in the demo);
a revert happened at a wall-clock moment. The mark goes between the last snapshot computed
before the revert and the first computed after it, where the numbers moved for that reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from auditor.storage.unit_of_work import UnitOfWork


class _Plotted(Protocol):
    @property
    def as_of(self) -> datetime: ...
    @property
    def computed_at(self) -> datetime | None: ...


@dataclass(frozen=True)
class RevertMark:
    """An import reverted: its labels left the project at ``at`` (wall clock). ``chart_at``:
    where the charts mark it, on their as_of axis: between the last snapshot computed before
    the revert and the first after it (None before a snapshot follows it)."""

    at: datetime
    import_id: int
    source: str
    labels: int
    chart_at: datetime | None = None

    @property
    def text(self) -> str:
        return f"import {self.import_id} ({self.source}) reverted: {self.labels} label(s) removed"


def _reverts(uow: UnitOfWork, project_id: int) -> list[RevertMark]:
    """The project's reverted imports as marks (not yet placed), oldest first."""
    marks = [
        RevertMark(record.reverted_at, record.id, record.source, record.reverted_labels or 0)
        for record in uow.imports.list_imports(project_id)
        if record.reverted_at is not None
    ]
    return sorted(marks, key=lambda m: (m.at, m.import_id))


def project_reverts(
    uow: UnitOfWork, slug: str, since: datetime | None = None, until: datetime | None = None
) -> list[RevertMark]:
    """Where reverts happened, for history listings; only those within ``since``..``until``
    (inclusive) when given, as the history's points."""
    with uow:
        marks = _reverts(uow, uow.require_project(slug).id)
    return [
        m for m in marks if (since is None or m.at >= since) and (until is None or m.at <= until)
    ]


def chart_reverts(
    uow: UnitOfWork, project_id: int, points: Iterable[_Plotted]
) -> tuple[RevertMark, ...]:
    """The project's reverts, oldest first, placed among ``points`` (one series of the
    charts; the cumulative one has a point per snapshot). Call inside ``uow``."""
    plotted = sorted(
        ((p.as_of, p.computed_at) for p in points if p.computed_at is not None),
        key=lambda pair: pair[0],
    )
    placed = []
    for mark in _reverts(uow, project_id):
        before = [as_of for as_of, computed in plotted if computed <= mark.at]
        after = [as_of for as_of, computed in plotted if computed > mark.at]
        chart_at = None
        if after:
            chart_at = after[0] if not before else before[-1] + (after[0] - before[-1]) / 2
        placed.append(replace(mark, chart_at=chart_at))
    return tuple(placed)
