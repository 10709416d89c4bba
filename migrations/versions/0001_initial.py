"""Initial schema: projects, categories, raters, items, sessions, labels.

Timestamps are BIGINT microseconds since the epoch (``auditor.storage.db.UtcMicros``).

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column(
            "collapse", sa.String(length=16), server_default=sa.text("'first'"), nullable=False
        ),
        sa.Column(
            "rho_mode",
            sa.String(length=16),
            server_default=sa.text("'approximate'"),
            nullable=False,
        ),
        sa.Column(
            "rho_unrated", sa.String(length=16), server_default=sa.text("'pool'"), nullable=False
        ),
        sa.Column(
            "interval_method",
            sa.String(length=16),
            server_default=sa.text("'jackknife'"),
            nullable=False,
        ),
        sa.Column("interval_level", sa.Float(), server_default=sa.text("0.95"), nullable=False),
        sa.Column(
            "bootstrap_resamples", sa.Integer(), server_default=sa.text("1000"), nullable=False
        ),
        sa.Column(
            "windows_days", sa.String(length=200), server_default=sa.text("'7'"), nullable=False
        ),
        sa.Column(
            "recompute_interval_seconds", sa.Integer(), server_default=sa.text("60"), nullable=False
        ),
        sa.CheckConstraint(
            "collapse IN ('first', 'latest', 'mode')", name=op.f("ck_projects_collapse")
        ),
        sa.CheckConstraint(
            "interval_method IN ('none', 'jackknife', 'bootstrap')",
            name=op.f("ck_projects_interval_method"),
        ),
        sa.CheckConstraint(
            "rho_mode IN ('approximate', 'exact')", name=op.f("ck_projects_rho_mode")
        ),
        sa.CheckConstraint(
            "rho_unrated IN ('pool', 'exclude', 'perfect')", name=op.f("ck_projects_rho_unrated")
        ),
        sa.CheckConstraint("slug <> ''", name=op.f("ck_projects_slug_not_empty")),
        sa.CheckConstraint(
            "bootstrap_resamples >= 10", name=op.f("ck_projects_bootstrap_resamples")
        ),
        sa.CheckConstraint(
            "interval_level >= 0.5 AND interval_level < 1", name=op.f("ck_projects_interval_level")
        ),
        sa.CheckConstraint(
            "recompute_interval_seconds > 0", name=op.f("ck_projects_recompute_interval")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("slug", name=op.f("uq_projects_slug")),
    )
    op.create_table(
        "categories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.CheckConstraint("name <> ''", name=op.f("ck_categories_name_not_empty")),
        sa.CheckConstraint("position >= 0", name=op.f("ck_categories_position_not_negative")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_categories_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_categories")),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_categories_project_id_id")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_categories_project_id_name")),
        sa.UniqueConstraint(
            "project_id", "position", name=op.f("uq_categories_project_id_position")
        ),
    )
    op.create_table(
        "items",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column(
            "metadata", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=True
        ),
        sa.CheckConstraint("external_id <> ''", name=op.f("ck_items_external_id_not_empty")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_items_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
        sa.UniqueConstraint(
            "project_id", "external_id", name=op.f("uq_items_project_id_external_id")
        ),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_items_project_id_id")),
    )
    op.create_table(
        "raters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=8), server_default=sa.text("'human'"), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=True),
        sa.CheckConstraint("external_id <> ''", name=op.f("ck_raters_external_id_not_empty")),
        sa.CheckConstraint("kind IN ('human', 'model')", name=op.f("ck_raters_kind")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_raters_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_raters")),
        sa.UniqueConstraint(
            "project_id", "external_id", name=op.f("uq_raters_project_id_external_id")
        ),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_raters_project_id_id")),
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("external_id <> ''", name=op.f("ck_sessions_external_id_not_empty")),
        sa.CheckConstraint("ended_at >= started_at", name=op.f("ck_sessions_ended_after_started")),
        sa.ForeignKeyConstraint(
            ["project_id", "rater_id"],
            ["raters.project_id", "raters.id"],
            name=op.f("fk_sessions_project_id_rater_id_raters"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_sessions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
        sa.UniqueConstraint(
            "project_id",
            "rater_id",
            "external_id",
            name=op.f("uq_sessions_project_id_rater_id_external_id"),
        ),
        sa.UniqueConstraint(
            "project_id", "rater_id", "id", name=op.f("uq_sessions_project_id_rater_id_id")
        ),
    )
    op.create_table(
        "labels",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column(
            "session_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("labeled_at", sa.BigInteger(), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("client_key", sa.String(length=200), nullable=True),
        sa.CheckConstraint("client_key <> ''", name=op.f("ck_labels_client_key_not_empty")),
        sa.ForeignKeyConstraint(
            ["project_id", "category_id"],
            ["categories.project_id", "categories.id"],
            name=op.f("fk_labels_project_id_category_id_categories"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["project_id", "item_id"],
            ["items.project_id", "items.id"],
            name=op.f("fk_labels_project_id_item_id_items"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id", "rater_id", "session_id"],
            ["sessions.project_id", "sessions.rater_id", "sessions.id"],
            name=op.f("fk_labels_project_id_rater_id_session_id_sessions"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id", "rater_id"],
            ["raters.project_id", "raters.id"],
            name=op.f("fk_labels_project_id_rater_id_raters"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_labels")),
        sa.UniqueConstraint(
            "project_id", "client_key", name=op.f("uq_labels_project_id_client_key")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("labels", schema=None) as batch_op:
        batch_op.create_index("ix_labels_project_id_id", ["project_id", "id"], unique=False)
        batch_op.create_index(
            "ix_labels_project_id_labeled_at", ["project_id", "labeled_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("labels", schema=None) as batch_op:
        batch_op.drop_index("ix_labels_project_id_labeled_at")
        batch_op.drop_index("ix_labels_project_id_id")

    op.drop_table("labels")
    op.drop_table("sessions")
    op.drop_table("raters")
    op.drop_table("items")
    op.drop_table("categories")
    op.drop_table("projects")
