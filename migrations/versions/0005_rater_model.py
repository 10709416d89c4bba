"""The project setting ``rater_model`` (docs/measures.md, "Version 2").

Existing projects get ``moments``, the new default; ``max_entropy`` reproduces the paper.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


_CHECK = "rater_model IN ('moments', 'max_entropy')"


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # SQLite cannot add a table constraint to an existing table (batch mode would copy and
        # drop ``projects``, cascading to its children); a column constraint it can add.
        op.execute(
            "ALTER TABLE projects ADD COLUMN rater_model VARCHAR(16) DEFAULT 'moments' NOT NULL "
            f"CONSTRAINT ck_projects_rater_model CHECK ({_CHECK})"
        )
        return
    op.add_column(
        "projects",
        sa.Column(
            "rater_model",
            sa.String(length=16),
            server_default=sa.text("'moments'"),
            nullable=False,
        ),
    )
    op.create_check_constraint(op.f("ck_projects_rater_model"), "projects", _CHECK)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint(op.f("ck_projects_rater_model"), "projects", type_="check")
    # SQLite (3.35+) drops a column with its column constraint
    op.drop_column("projects", "rater_model")
