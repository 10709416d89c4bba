"""Tenant boundaries: channels lose ``internal`` (private targets are the operator's decision,
``AUDITOR_ALLOW_PRIVATE_TARGETS``, not a project's).

Revision ID: 0007
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # A channel marked internal before keeps its target; from now on it is refused at send
    # time unless the operator allows its network for the whole deployment.
    with op.batch_alter_table("alert_channels") as batch:
        batch.drop_column("internal")


def downgrade() -> None:
    with op.batch_alter_table("alert_channels") as batch:
        batch.add_column(
            sa.Column("internal", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
