"""Snapshots of many raters keep their result without the pairs beside it (issue 22 item 2).

- ``snapshots.lean``: the result without ``pairwise_cohen``, when that has more than 435
  pairs (30 raters); NULL otherwise. The project page reads a snapshot's rater parts from it,
  so the database does not decompress tens of thousands of pairs (3.7 MB at 200 raters) per
  read. Filled here for the snapshots already written, and by ``insert_snapshot`` after.

Revision ID: 0021
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0021"
down_revision: str | None = "0022"
branch_labels: str | None = None
depends_on: str | None = None

LEAN_PAIRS = 435  # auditor.storage.snapshot_repository.LEAN_PAIRS when written


def upgrade() -> None:
    json = sa.JSON().with_variant(JSONB(), "postgresql")
    with op.batch_alter_table("snapshots") as batch:
        batch.add_column(sa.Column("lean", json, nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "UPDATE snapshots SET lean = result - 'pairwise_cohen' "
            "WHERE jsonb_typeof(result->'pairwise_cohen') = 'array' "
            f"AND jsonb_array_length(result->'pairwise_cohen') > {LEAN_PAIRS}"
        )
    else:
        op.execute(
            "UPDATE snapshots SET lean = json_remove(result, '$.pairwise_cohen') "
            "WHERE json_type(result, '$.pairwise_cohen') = 'array' "
            f"AND json_array_length(result, '$.pairwise_cohen') > {LEAN_PAIRS}"
        )


def downgrade() -> None:
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("lean")
