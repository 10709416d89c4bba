"""Snapshots and their metric points: immutable results of recomputes.

A snapshot is one recompute of one scope of one project in one tick. It is written once, with
all its points, in a single transaction (``snapshot_repository.insert_snapshot``); the unique
key (project_id, scope, tick) turns a second writer of the same slot into a no-op. Rows are
never updated. ``result`` keeps the rendered ``auditor stats --json`` dict, so a snapshot can be
printed exactly as it was computed; the points are the same numbers in a narrow, indexed form
for time-series reads.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, BigId, UtcMicros

SCOPE_MAX = 16
METRIC_MAX = 64
# A pair subject is "rater_a|rater_b", two external ids of up to 200 characters.
SUBJECT_ID_MAX = 401

_Json = JSON().with_variant(JSONB(), "postgresql")


class Snapshot(Base):
    __tablename__ = "snapshots"
    __table_args__ = (
        UniqueConstraint("project_id", "scope", "tick"),
        # "the snapshot in force at time T" and "latest per scope" read by as_of.
        Index("ix_snapshots_project_id_scope_as_of", "project_id", "scope", "as_of"),
        CheckConstraint("watermark >= 0", name="watermark_not_negative"),
        CheckConstraint("n_labels >= 0", name="n_labels_not_negative"),
        CheckConstraint(
            "(window_start IS NULL) = (window_end IS NULL)", name="window_ends_together"
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(String(SCOPE_MAX))
    tick: Mapped[int] = mapped_column(BigInteger)
    computed_at: Mapped[datetime] = mapped_column(UtcMicros)
    as_of: Mapped[datetime] = mapped_column(UtcMicros)
    window_start: Mapped[datetime | None] = mapped_column(UtcMicros)
    window_end: Mapped[datetime | None] = mapped_column(UtcMicros)
    watermark: Mapped[int] = mapped_column(BigInteger)
    # Labels in the whole project when computed (the dirty check compares counts, see
    # auditor.snapshots.dirty); n_labels is the count inside this scope.
    project_label_count: Mapped[int] = mapped_column(BigInteger)
    n_labels: Mapped[int] = mapped_column(BigInteger)
    n_items: Mapped[int] = mapped_column(BigInteger)
    n_raters: Mapped[int] = mapped_column(Integer)
    n_pairable_items: Mapped[int] = mapped_column(BigInteger)
    categories: Mapped[list[str]] = mapped_column(_Json)
    settings: Mapped[dict[str, Any]] = mapped_column(_Json)
    code_version: Mapped[str] = mapped_column(String(64))
    seed: Mapped[int | None] = mapped_column(BigInteger)
    interval_method: Mapped[str] = mapped_column(String(16))
    interval_level: Mapped[float | None] = mapped_column(Float)
    duration_ms: Mapped[float] = mapped_column(Float)
    result: Mapped[dict[str, Any]] = mapped_column(_Json)
    # The result without its pairwise_cohen, kept beside it when the pairs are many (more
    # than LEAN_PAIRS): a page reading the rater parts of a 200-rater snapshot does not make
    # the database decompress its 19,900 pairs (3.7 MB). Not loaded unless asked for.
    lean: Mapped[dict[str, Any] | None] = mapped_column(_Json, nullable=True, deferred=True)


class MetricPoint(Base):
    __tablename__ = "metric_points"
    __table_args__ = (
        UniqueConstraint("snapshot_id", "metric", "subject_kind", "subject_id"),
        Index(
            "ix_metric_points_history",
            "project_id",
            "metric",
            "subject_kind",
            "subject_id",
            "scope",
            "as_of",
        ),
        CheckConstraint(
            "subject_kind IN ('project', 'rater', 'model', 'pair')", name="subject_kind"
        ),
        CheckConstraint("ci_low IS NULL OR ci_high IS NULL OR ci_low <= ci_high", name="ci"),
        CheckConstraint("value IS NOT NULL OR reason IS NOT NULL", name="undefined_has_reason"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("snapshots.id", ondelete="CASCADE"),
    )
    # Denormalised from the snapshot so a history read touches one index only.
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(String(SCOPE_MAX))
    computed_at: Mapped[datetime] = mapped_column(UtcMicros)
    as_of: Mapped[datetime] = mapped_column(UtcMicros)
    metric: Mapped[str] = mapped_column(String(METRIC_MAX))
    subject_kind: Mapped[str] = mapped_column(String(8))
    subject_id: Mapped[str] = mapped_column(String(SUBJECT_ID_MAX))
    value: Mapped[float | None] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int | None] = mapped_column(BigInteger)
    reason: Mapped[str | None] = mapped_column(Text)


class MetricRollup(Base):
    """Per series and per span of time at a few fixed widths (``history_rollups.LEVELS``):
    what a chart's bucket needs of the points in the span, kept at write time so a page over
    a long history reads a few hundred of these instead of every point (issue 22). Written
    with the snapshot (``history_rollups.add_snapshot``); every column merges (sum, min, max),
    so a span's row is folded into by upsert and spans fold into display buckets. Times are
    BIGINT microseconds. Pair series are not kept (19,900 of them at 200 raters)."""

    __tablename__ = "metric_rollups"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    metric: Mapped[str] = mapped_column(String(METRIC_MAX), primary_key=True)
    subject_kind: Mapped[str] = mapped_column(String(8), primary_key=True)
    subject_id: Mapped[str] = mapped_column(String(SUBJECT_ID_MAX), primary_key=True)
    scope: Mapped[str] = mapped_column(String(SCOPE_MAX), primary_key=True)
    # The span's width in seconds (one of history_rollups.LEVELS) and its start in
    # microseconds since the epoch, a multiple of the width.
    span: Mapped[int] = mapped_column(Integer, primary_key=True)
    span_start: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    points: Mapped[int] = mapped_column(BigInteger)
    # Lowest and highest defined value; the first and last time a value was defined.
    low: Mapped[float | None] = mapped_column(Float)
    high: Mapped[float | None] = mapped_column(Float)
    low_at: Mapped[int | None] = mapped_column(BigInteger)
    high_at: Mapped[int | None] = mapped_column(BigInteger)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int | None] = mapped_column(BigInteger)
    # Undefined points: how many, the first one's time, the least reason (as min() in SQL).
    undefined: Mapped[int] = mapped_column(BigInteger)
    undefined_at: Mapped[int | None] = mapped_column(BigInteger)
    reason: Mapped[str | None] = mapped_column(Text)
    computed_at: Mapped[int] = mapped_column(BigInteger)
    snapshot_id: Mapped[int] = mapped_column(BigInteger)


class SnapshotCount(Base):
    """Snapshots per project and scope, counted as they are written (``insert_snapshot``):
    the page's legend says "(100,000 snapshots)" without counting 100,000 rows (90 ms)."""

    __tablename__ = "snapshot_counts"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    scope: Mapped[str] = mapped_column(String(SCOPE_MAX), primary_key=True)
    snapshots: Mapped[int] = mapped_column(BigInteger)
