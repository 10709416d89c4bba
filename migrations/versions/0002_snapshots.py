"""Snapshots and metric points: the immutable results of recomputes.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

_json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("id", _big_id, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("tick", sa.BigInteger(), nullable=False),
        sa.Column("computed_at", sa.BigInteger(), nullable=False),
        sa.Column("as_of", sa.BigInteger(), nullable=False),
        sa.Column("window_start", sa.BigInteger(), nullable=True),
        sa.Column("window_end", sa.BigInteger(), nullable=True),
        sa.Column("watermark", sa.BigInteger(), nullable=False),
        sa.Column("project_label_count", sa.BigInteger(), nullable=False),
        sa.Column("n_labels", sa.BigInteger(), nullable=False),
        sa.Column("n_items", sa.BigInteger(), nullable=False),
        sa.Column("n_raters", sa.Integer(), nullable=False),
        sa.Column("n_pairable_items", sa.BigInteger(), nullable=False),
        sa.Column("categories", _json, nullable=False),
        sa.Column("settings", _json, nullable=False),
        sa.Column("code_version", sa.String(length=64), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("interval_method", sa.String(length=16), nullable=False),
        sa.Column("interval_level", sa.Float(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("result", _json, nullable=False),
        sa.CheckConstraint(
            "(window_start IS NULL) = (window_end IS NULL)",
            name=op.f("ck_snapshots_window_ends_together"),
        ),
        sa.CheckConstraint("n_labels >= 0", name=op.f("ck_snapshots_n_labels_not_negative")),
        sa.CheckConstraint("watermark >= 0", name=op.f("ck_snapshots_watermark_not_negative")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_snapshots_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_snapshots")),
        sa.UniqueConstraint(
            "project_id", "scope", "tick", name=op.f("uq_snapshots_project_id_scope_tick")
        ),
    )
    op.create_index(
        "ix_snapshots_project_id_scope_as_of",
        "snapshots",
        ["project_id", "scope", "as_of"],
        unique=False,
    )
    op.create_table(
        "metric_points",
        sa.Column("id", _big_id, nullable=False),
        sa.Column("snapshot_id", _big_id, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("computed_at", sa.BigInteger(), nullable=False),
        sa.Column("as_of", sa.BigInteger(), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("subject_kind", sa.String(length=8), nullable=False),
        sa.Column("subject_id", sa.String(length=401), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("n", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "ci_low IS NULL OR ci_high IS NULL OR ci_low <= ci_high",
            name=op.f("ck_metric_points_ci"),
        ),
        sa.CheckConstraint(
            "subject_kind IN ('project', 'rater', 'model', 'pair')",
            name=op.f("ck_metric_points_subject_kind"),
        ),
        sa.CheckConstraint(
            "value IS NOT NULL OR reason IS NOT NULL",
            name=op.f("ck_metric_points_undefined_has_reason"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_metric_points_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_metric_points_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_points")),
        sa.UniqueConstraint(
            "snapshot_id",
            "metric",
            "subject_kind",
            "subject_id",
            name=op.f("uq_metric_points_snapshot_id_metric_subject_kind_subject_id"),
        ),
    )
    op.create_index(
        "ix_metric_points_history",
        "metric_points",
        ["project_id", "metric", "subject_kind", "subject_id", "scope", "as_of"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_metric_points_history", table_name="metric_points")
    op.drop_table("metric_points")
    op.drop_index("ix_snapshots_project_id_scope_as_of", table_name="snapshots")
    op.drop_table("snapshots")
