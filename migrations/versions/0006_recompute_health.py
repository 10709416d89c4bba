"""Recompute health: failures per project, the scheduler heartbeat, idempotency expiry index.

Revision ID: 0006
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "recompute_failures",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("consecutive", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("last_failed_at", sa.BigInteger(), nullable=False),
        sa.Column("retry_after", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_recompute_failures_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_recompute_failures")),
    )
    op.create_table(
        "scheduler_heartbeats",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("beat_at", sa.BigInteger(), nullable=False),
        sa.Column("interval_seconds", sa.Float(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_scheduler_heartbeats")),
    )
    # The scheduler prunes expired idempotency records by age.
    op.create_index(
        "ix_idempotency_records_created_at", "idempotency_records", ["created_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_idempotency_records_created_at", table_name="idempotency_records")
    op.drop_table("scheduler_heartbeats")
    op.drop_table("recompute_failures")
