"""Kept statistics (issue 22): per project, the mergeable sums the point estimates are
functions of, per group of items, and what they cover.

- ``kept_states``: watermark, labels folded in, groups, signature, when updated;
- ``kept_groups``: one ``.npz`` payload of sums per (project, group).

Empty at upgrade: the first recompute (or ``auditor recompute PROJECT --rebuild``) builds a
project's state from its labels.

Revision ID: 0022
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0020"
branch_labels: str | None = None
depends_on: str | None = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "kept_states",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("watermark", _BIG_ID, nullable=False),
        sa.Column("label_count", _BIG_ID, nullable=False),
        sa.Column("groups", sa.Integer(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_kept_states_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_kept_states")),
    )
    op.create_table(
        "kept_groups",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("group_index", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_kept_groups_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "group_index", name=op.f("pk_kept_groups")),
    )


def downgrade() -> None:
    op.drop_table("kept_groups")
    op.drop_table("kept_states")
