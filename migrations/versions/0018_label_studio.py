"""Label Studio: per-project settings, refused webhook calls, a key role of its own, and the
task (and, for predictions, model and label) of each annotation the receiver remembers.

- ``label_studio_settings``: one row per project that set them (item field, from_name, how
  predictions map, the URL, project and token of its API, the scheduled sync);
- ``label_studio_rejections``: webhook calls answered with an error, per project and status;
- ``label_studio_annotations`` gains ``task_id`` (a deleted task takes its labels along),
  ``model_version`` and ``label`` (of predictions); rows stored before stay without a task
  until the next sync;
- ``api_keys.role`` admits ``label-studio`` (the only role the webhook route takes) and widens
  to 16 characters.

Revision ID: 0018
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None

_ROLE = "ck_api_keys_role"
_ROLES_OLD = "role IN ('ingest', 'read', 'admin')"
_ROLES_NEW = "role IN ('ingest', 'read', 'admin', 'label-studio')"
_TASK_INDEX = "ix_label_studio_annotations_project_id_task_id"


def upgrade() -> None:
    op.create_table(
        "label_studio_settings",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("item_field", sa.String(length=200), nullable=True),
        sa.Column("from_name", sa.String(length=200), nullable=True),
        sa.Column("predictions", sa.String(length=16), server_default="model", nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=True),
        sa.Column("ls_project", sa.Integer(), nullable=True),
        sa.Column("token", sa.String(length=2000), nullable=True),
        sa.Column("sync_minutes", sa.Integer(), nullable=True),
        sa.Column("last_sync_at", sa.BigInteger(), nullable=True),
        sa.Column("last_sync_status", sa.String(length=500), nullable=True),
        sa.CheckConstraint(
            "predictions IN ('model', 'ignore')", name=op.f("ck_label_studio_settings_predictions")
        ),
        sa.CheckConstraint(
            "sync_minutes IS NULL OR sync_minutes > 0",
            name=op.f("ck_label_studio_settings_sync_minutes"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_label_studio_settings_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_label_studio_settings")),
    )
    op.create_table(
        "label_studio_rejections",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("total", sa.BigInteger(), nullable=False),
        sa.Column("since_sync", sa.BigInteger(), nullable=False),
        sa.Column("last_at", sa.BigInteger(), nullable=False),
        sa.Column("last_message", sa.String(length=500), nullable=False),
        sa.Column("pending", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_label_studio_rejections_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "status", name=op.f("pk_label_studio_rejections")),
    )
    with op.batch_alter_table("label_studio_annotations") as batch:
        batch.add_column(sa.Column("task_id", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("model_version", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("label", sa.String(length=100), nullable=True))
        batch.create_index(_TASK_INDEX, ["project_id", "task_id"])
    # SQLite cannot alter a constraint or a column type: batch mode rebuilds api_keys
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_constraint(op.f(_ROLE), type_="check")
        batch.alter_column("role", type_=sa.String(length=16), existing_nullable=False)
        batch.create_check_constraint(op.f(_ROLE), _ROLES_NEW)


def downgrade() -> None:
    op.execute("DELETE FROM api_keys WHERE role = 'label-studio'")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_constraint(op.f(_ROLE), type_="check")
        batch.alter_column("role", type_=sa.String(length=8), existing_nullable=False)
        batch.create_check_constraint(op.f(_ROLE), _ROLES_OLD)
    with op.batch_alter_table("label_studio_annotations") as batch:
        batch.drop_index(_TASK_INDEX)
        batch.drop_column("label")
        batch.drop_column("model_version")
        batch.drop_column("task_id")
    op.drop_table("label_studio_rejections")
    op.drop_table("label_studio_settings")
