"""The repeat planner (its project settings, the planned repeats, the answers given) and the
Label Studio annotations seen by the webhook receiver.

Existing projects get the defaults (10% of a rater's items repeated, at least 24 h and 20 other
items between a look and its repeat, a wanted half-width of 0.10, repeats open for 7 days).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

_SETTINGS = (
    ("repeat_share", sa.Float(), "0.1"),
    ("repeat_min_gap_hours", sa.Float(), "24.0"),
    ("repeat_min_gap_items", sa.Integer(), "20"),
    ("repeat_half_width", sa.Float(), "0.1"),
    ("repeat_open_days", sa.Float(), "7.0"),
)


def upgrade() -> None:
    for name, type_, default in _SETTINGS:
        op.add_column(
            "projects",
            sa.Column(name, type_, server_default=sa.text(default), nullable=False),
        )
    big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "planned_repeats",
        sa.Column("id", big_id, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("item_id", big_id, nullable=False),
        sa.Column("first_labeled_at", sa.BigInteger(), nullable=False),
        sa.Column("planned_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("request_id", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=16), server_default=sa.text("'open'"), nullable=False),
        sa.Column("fulfilled_label_id", big_id, nullable=True),
        sa.CheckConstraint(
            "status IN ('open', 'fulfilled', 'expired')", name=op.f("ck_planned_repeats_status")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_planned_repeats_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_planned_repeats")),
    )
    op.create_index(
        "ix_planned_repeats_project_id_rater_id", "planned_repeats", ["project_id", "rater_id"]
    )
    # At most one open repeat per (project, rater, item); also the fulfilment join's index.
    op.create_index(
        "uq_planned_repeats_open",
        "planned_repeats",
        ["project_id", "rater_id", "item_id"],
        unique=True,
        postgresql_where=sa.text("status = 'open'"),
        sqlite_where=sa.text("status = 'open'"),
    )
    op.create_table(
        "repeat_requests",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column(
            "response",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_repeat_requests_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "project_id", "rater_id", "request_id", name=op.f("pk_repeat_requests")
        ),
    )
    op.create_table(
        "label_studio_annotations",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("annotation_id", sa.String(length=200), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("deleted", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_label_studio_annotations_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "project_id", "annotation_id", name=op.f("pk_label_studio_annotations")
        ),
    )


def downgrade() -> None:
    op.drop_table("label_studio_annotations")
    op.drop_table("repeat_requests")
    op.drop_index("uq_planned_repeats_open", table_name="planned_repeats")
    op.drop_index("ix_planned_repeats_project_id_rater_id", table_name="planned_repeats")
    op.drop_table("planned_repeats")
    for name, _, _ in reversed(_SETTINGS):
        op.drop_column("projects", name)
