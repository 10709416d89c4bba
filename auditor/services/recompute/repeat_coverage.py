"""Repeat coverage per rater in the cumulative snapshot (docs/repeats.md).

Written in the snapshot's own transaction as metric points of each human rater (history,
/metrics, alert rules, the dashboard's rater table); the snapshot's JSON keeps the
``auditor stats --json`` shape:

    repeats_planned, repeats_fulfilled, repeats_expired, repeats_outstanding  counts
    repeats_needed   repeated items needed for the wanted SA precision (n: those she has)
    repeat_coverage  repeated items she has / needed (n: needed), below 1 while short

So a rater without repeats reads "0 of 98 needed" and can alert, not "insufficient data".
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from auditor.domain import to_micros
from auditor.snapshots.points import ComputedPoint
from auditor.stats.repeats import needed_repeats
from auditor.storage import repeat_repository as repo
from auditor.storage.unit_of_work import UnitOfWork


def _measure(value: float, n: int) -> dict[str, Any]:
    return {"value": value, "ci_low": None, "ci_high": None, "n": n, "reason": None}


def add_coverage(
    uow: UnitOfWork, project_id: int, rendered: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    """The metric point rows of each human rater's coverage (``rendered``: the cumulative
    measure set, read for the rater's self-agreement and repeated items)."""
    settings, level = uow.repeats.project_repeat_settings(project_id)
    counts = uow.repeats.coverage(project_id, to_micros(now))
    ids = {name: rater_id for rater_id, name in uow.repeats.rater_names(project_id).items()}
    points: list[dict[str, Any]] = []
    for rater, measures in rendered.get("raters", {}).items():
        sa = measures.get("self_agreement") or {}
        value = sa.get("value")
        have = int(measures.get("n_repeated_items") or 0)
        finite = value if value is not None and math.isfinite(value) else None
        needed = needed_repeats(finite, have, settings.half_width, level)
        c = counts.get(ids.get(rater, -1), repo.Coverage())
        added = {
            "repeats_planned": _measure(c.planned, c.planned),
            "repeats_fulfilled": _measure(c.fulfilled, c.fulfilled),
            "repeats_expired": _measure(c.expired, c.expired),
            "repeats_outstanding": _measure(c.open, c.open),
            "repeats_needed": _measure(needed, have),
            "repeat_coverage": _measure(have / needed, needed),
        }
        points.extend(
            ComputedPoint(name, "rater", rater, m["value"], None, None, m["n"], None).as_row()
            for name, m in added.items()
        )
    return points
