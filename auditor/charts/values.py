"""What the charts draw: measurements, series and heatmap cells (the charts' inputs, kept
apart from the drawing so every chart module can take them without importing another)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class ChartPoint:
    """One measurement: ``value`` None means undefined, and ``reason`` says why."""

    at: datetime
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ChartSeries:
    name: str
    color: str
    points: Sequence[ChartPoint] = field(default_factory=tuple)
    dashed: bool = False


@dataclass(frozen=True)
class HeatCell:
    row: str
    column: str
    value: float | None
    n: int | None = None
    reason: str | None = None
