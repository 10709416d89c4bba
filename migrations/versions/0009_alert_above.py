"""Alert conditions ``above`` and ``confidently_above``: for metrics where higher is worse
(``random_choice``, the share of a rater's answers that are random choices), the conditions
that read low values as bad could only fire the wrong way.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

_NAME = "ck_alert_rules_condition_kind"
_OLD = "condition_kind IN ('below', 'confidently_below', 'not_confidently_above', 'drop')"
_NEW = (
    "condition_kind IN ('below', 'confidently_below', 'not_confidently_above', 'drop', "
    "'above', 'confidently_above')"
)


def _replace(check: str) -> None:
    # SQLite cannot alter a table constraint: batch mode rebuilds the table (env.py turns
    # foreign keys off for migrations, so the copy does not cascade to the rules' children)
    with op.batch_alter_table("alert_rules") as batch:
        batch.drop_constraint(op.f(_NAME), type_="check")
        batch.create_check_constraint(op.f(_NAME), check)


def upgrade() -> None:
    _replace(_NEW)


def downgrade() -> None:
    op.execute("DELETE FROM alert_rules WHERE condition_kind IN ('above', 'confidently_above')")
    _replace(_OLD)
