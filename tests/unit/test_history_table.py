"""`auditor history`'s table keeps its columns aligned whatever the as_of values' length."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from auditor.cli.recompute import OutputFormat, _render_history


def test_columns_line_up_with_microseconds_in_some_times() -> None:
    points = [
        SimpleNamespace(
            as_of=datetime(2026, 11, 2, 22, tzinfo=UTC), scope="cumulative", value=0.8,
            ci_low=0.7, ci_high=0.9, n=40, reason=None,
        ),
        SimpleNamespace(
            as_of=datetime(2026, 11, 26, 14, 28, 53, 123456, tzinfo=UTC), scope="7d",
            value=None, ci_low=None, ci_high=None, n=0, reason="no labels",
        ),
    ]  # fmt: skip
    header, *rows = _render_history(points, OutputFormat.TABLE).splitlines()
    column = header.index("scope")
    assert [row[column:].split()[0] for row in rows] == ["cumulative", "7d"]
