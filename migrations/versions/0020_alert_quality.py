"""Alerts a team lead can trust (issue 21): a bound rule's ``margin`` (the widest interval it
judges when the interval holds the threshold), a drop rule's ``z`` (the standard errors the drop
must reach), the ``rater_change`` condition, and ``alert_detectors``: the incremental state of
each rater's change detector (``subject_key`` ``''`` holds the rule's label watermark).

Revision ID: 0020
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0018"
branch_labels: str | None = None
depends_on: str | None = None

_NAME = "ck_alert_rules_condition_kind"
_OLD = (
    "condition_kind IN ('below', 'confidently_below', 'not_confidently_above', 'drop', "
    "'above', 'confidently_above')"
)
_NEW = (
    "condition_kind IN ('below', 'confidently_below', 'not_confidently_above', 'drop', "
    "'above', 'confidently_above', 'rater_change')"
)


def _replace(check: str) -> None:
    # SQLite cannot alter a table constraint: batch mode rebuilds the table (as in 0009)
    with op.batch_alter_table("alert_rules") as batch:
        batch.drop_constraint(op.f(_NAME), type_="check")
        batch.create_check_constraint(op.f(_NAME), check)


def upgrade() -> None:
    op.add_column("alert_rules", sa.Column("margin", sa.Float(), nullable=True))
    op.add_column("alert_rules", sa.Column("z", sa.Float(), nullable=True))
    _replace(_NEW)
    op.create_table(
        "alert_detectors",
        sa.Column("rule_id", sa.String(length=200), nullable=False),
        sa.Column("subject_key", sa.String(length=220), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["alert_rules.id"],
            name=op.f("fk_alert_detectors_rule_id_alert_rules"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_detectors_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("rule_id", "subject_key", name=op.f("pk_alert_detectors")),
    )


def downgrade() -> None:
    op.drop_table("alert_detectors")
    op.execute("DELETE FROM alert_rules WHERE condition_kind = 'rater_change'")
    _replace(_OLD)
    with op.batch_alter_table("alert_rules") as batch:
        batch.drop_column("z")
        batch.drop_column("margin")
