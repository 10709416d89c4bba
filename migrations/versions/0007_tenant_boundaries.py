"""Tenant boundaries: channels lose ``internal`` (private targets are the operator's decision,
``AUDITOR_ALLOW_PRIVATE_TARGETS``, not a project's); dashboard sessions are stored server-side;
the deployment's secret for opaque ids (``auditor.services.access.public_ids``).

Revision ID: 0007
Revises: 0004
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # A channel marked internal before keeps its target; from now on it is refused at send
    # time unless the operator allows its network for the whole deployment.
    with op.batch_alter_table("alert_channels") as batch:
        batch.drop_column("internal")
    op.create_table(
        "dashboard_sessions",
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id_hash", name=op.f("pk_dashboard_sessions")),
    )
    op.create_index(
        "ix_dashboard_sessions_expires_at", "dashboard_sessions", ["expires_at"], unique=False
    )
    instance_secrets = op.create_table(
        "instance_secrets",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_instance_secrets")),
    )
    op.bulk_insert(instance_secrets, [{"name": "public_ids", "value": secrets.token_hex(32)}])


def downgrade() -> None:
    op.drop_table("instance_secrets")
    op.drop_index("ix_dashboard_sessions_expires_at", table_name="dashboard_sessions")
    op.drop_table("dashboard_sessions")
    with op.batch_alter_table("alert_channels") as batch:
        batch.add_column(
            sa.Column("internal", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
