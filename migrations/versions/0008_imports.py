"""Import records, labels.import_id, and the natural-identity index of labels.

Columns and indexes are added in place (no batch rebuild of labels on SQLite, which would drop
the reference triggers of migration 0001).

Revision ID: 0008
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

_big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "imports",
        sa.Column("id", _big_id, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.Column("inserted", sa.Integer(), nullable=False),
        sa.Column("duplicates", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("first_label_id", _big_id, nullable=True),
        sa.Column("last_label_id", _big_id, nullable=True),
        sa.Column("reverted_at", sa.BigInteger(), nullable=True),
        sa.Column("reverted_labels", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "rows >= 0 AND inserted >= 0 AND duplicates >= 0", name=op.f("ck_imports_counts")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_imports_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_imports")),
    )
    op.create_index("ix_imports_project_id_content_hash", "imports", ["project_id", "content_hash"])
    op.add_column("labels", sa.Column("import_id", _big_id, nullable=True))
    op.create_index(
        "ix_labels_identity", "labels", ["project_id", "item_id", "rater_id", "labeled_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_labels_identity", table_name="labels")
    if op.get_bind().dialect.name == "sqlite":
        # DROP COLUMN in place (SQLite >= 3.35): a batch rebuild would drop the triggers.
        op.execute("ALTER TABLE labels DROP COLUMN import_id")
    else:
        op.drop_column("labels", "import_id")
    op.drop_index("ix_imports_project_id_content_hash", table_name="imports")
    op.drop_table("imports")
