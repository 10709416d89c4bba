"""Reverts on the charts: one mark per place, however many reverts fell there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.charts.svg import line_chart
from auditor.charts.values import ChartPoint, ChartSeries
from auditor.presentation.figures import chart_marks
from auditor.services.queries.reverts import RevertMark

T0 = datetime(2026, 11, 20, tzinfo=UTC)


def _mark(import_id: int, labels: int, at: datetime | None) -> RevertMark:
    return RevertMark(T0, import_id, f"f{import_id}.csv", labels, at)


def test_reverts_between_the_same_snapshots_share_one_mark() -> None:
    here, there = T0 + timedelta(hours=1), T0 + timedelta(hours=5)
    reverts = [_mark(i, 10, here) for i in range(1, 4)] + [_mark(4, 7, there), _mark(5, 1, None)]
    marks = chart_marks(reverts)
    assert [(at, label) for at, label, _ in marks] == [(here, "3 reverts"), (there, "revert")]
    assert marks[0][2] == "3 imports reverted: 30 label(s) removed"
    assert marks[1][2] == "import 4 (f4.csv) reverted: 7 label(s) removed"


def test_the_chart_draws_each_place_once() -> None:
    points = [ChartPoint(T0 + timedelta(hours=h), 0.5) for h in range(6)]
    here = T0 + timedelta(hours=2)
    svg = line_chart(
        "k",
        [ChartSeries("cumulative", "#000", tuple(points))],
        marks=chart_marks([_mark(i, 1, here) for i in range(40)]),
    )
    assert svg.count("data-mark=") == 1 and ">40 reverts</text>" in svg
