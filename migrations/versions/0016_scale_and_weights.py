"""The project settings ``scale`` and ``weights`` (docs/measures.md, "Ordinal scales").

Existing projects get ``nominal`` (what they were computed as) and ``quadratic``, the default
weights of an ordinal scale.

Revision ID: 0016
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None

_COLUMNS = (
    ("scale", "nominal", "scale IN ('nominal', 'ordinal')"),
    ("weights", "quadratic", "weights IN ('quadratic', 'linear')"),
)


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for name, default, check in _COLUMNS:
        if sqlite:
            # SQLite cannot add a table constraint to an existing table (batch mode would copy
            # and drop ``projects``, cascading to its children); a column constraint it can add.
            op.execute(
                f"ALTER TABLE projects ADD COLUMN {name} VARCHAR(16) DEFAULT '{default}' NOT NULL "
                f"CONSTRAINT ck_projects_{name} CHECK ({check})"
            )
            continue
        op.add_column(
            "projects",
            sa.Column(
                name, sa.String(length=16), server_default=sa.text(f"'{default}'"), nullable=False
            ),
        )
        op.create_check_constraint(op.f(f"ck_projects_{name}"), "projects", check)


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for name, _, _ in reversed(_COLUMNS):
        if not sqlite:
            op.drop_constraint(op.f(f"ck_projects_{name}"), "projects", type_="check")
        # SQLite (3.35+) drops a column with its column constraint
        op.drop_column("projects", name)
