"""What ``ReadRepository`` returns: frozen records of plain values, one per kind of row (the
API turns them into its response models; the field names are the API's)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class RaterLabelsRow:
    rater: str
    kind: str
    labels: int


@dataclass(frozen=True)
class ItemRow:
    """An item; ``metadata`` and ``labels`` are read for one item, not for a page of them."""

    item: str
    metadata: dict[str, Any] | None = None
    labels: int | None = None


@dataclass(frozen=True)
class SessionRow:
    id: int
    session: str
    rater: str
    started_at: datetime
    ended_at: datetime


@dataclass(frozen=True)
class SnapshotSummaryRow:
    id: int
    scope: str
    tick: int
    as_of: datetime
    computed_at: datetime
    window_start: datetime | None
    window_end: datetime | None
    watermark: int
    project_label_count: int
    n_labels: int
    n_items: int
    n_raters: int
    duration_ms: float
    code_version: str


@dataclass(frozen=True)
class HistoryPointRow:
    scope: str
    as_of: datetime
    computed_at: datetime
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None
    snapshot_id: int


@dataclass(frozen=True)
class LatestPointRow:
    slug: str
    scope: str
    metric: str
    subject_kind: str
    subject_id: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None
    as_of: datetime


@dataclass(frozen=True)
class RecomputeFactRow:
    slug: str
    scope: str
    duration_ms: float
    computed_at: datetime


@dataclass(frozen=True)
class SnapshotRow:
    """One snapshot in full: every column of ``snapshots``, ``result`` its stats JSON."""

    id: int
    project_id: int
    scope: str
    tick: int
    computed_at: datetime
    as_of: datetime
    window_start: datetime | None
    window_end: datetime | None
    watermark: int
    project_label_count: int
    n_labels: int
    n_items: int
    n_raters: int
    n_pairable_items: int
    categories: list[str]
    settings: dict[str, Any]
    code_version: str
    seed: int | None
    interval_method: str
    interval_level: float | None
    duration_ms: float
    result: dict[str, Any]
