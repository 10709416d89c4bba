"""Kept statistics per scope (issue 22): the cumulative sums and one state per rolling window,
each window with the labeled_at range its sums cover.

The kept tables hold derived data only: they are dropped and created again with the scope in
their keys, and the first recompute after the upgrade rebuilds each project's states from its
labels.

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | None = None
depends_on: str | None = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _create(with_scope: bool) -> None:
    scope = [sa.Column("scope", sa.String(16), nullable=False)] if with_scope else []
    window = (
        [
            sa.Column("start_us", sa.BigInteger(), nullable=True),
            sa.Column("end_us", sa.BigInteger(), nullable=True),
        ]
        if with_scope
        else []
    )
    keys = ["project_id", "scope"] if with_scope else ["project_id"]
    op.create_table(
        "kept_states",
        sa.Column("project_id", sa.Integer(), nullable=False),
        *scope,
        sa.Column("watermark", _BIG_ID, nullable=False),
        sa.Column("label_count", _BIG_ID, nullable=False),
        sa.Column("groups", sa.Integer(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        *window,
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_kept_states_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(*keys, name=op.f("pk_kept_states")),
    )
    op.create_table(
        "kept_groups",
        sa.Column("project_id", sa.Integer(), nullable=False),
        *[sa.Column("scope", sa.String(16), nullable=False)] * with_scope,
        sa.Column("group_index", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_kept_groups_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(*keys, "group_index", name=op.f("pk_kept_groups")),
    )


def upgrade() -> None:
    op.drop_table("kept_groups")
    op.drop_table("kept_states")
    _create(with_scope=True)


def downgrade() -> None:
    op.drop_table("kept_groups")
    op.drop_table("kept_states")
    _create(with_scope=False)
