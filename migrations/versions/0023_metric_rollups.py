"""History rollups (issue 22): per series and per span of an hour, six hours, a day, a week
and four weeks, the summary a chart's bucket draws (``auditor.storage.history_rollups``), so
a page over a long history reads a few hundred rows instead of every point.

Backfilled from ``metric_points`` (every series but pairs), one ``INSERT ... SELECT ... GROUP
BY`` per level. With them, ``snapshot_counts``: snapshots per project and scope, counted at
write time (the page's legend), backfilled from ``snapshots``.

Revision ID: 0023
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0021"
branch_labels: str | None = None
depends_on: str | None = None

# auditor.storage.history_rollups.LEVELS and REBUILD_SQL when written
_LEVELS = (3600, 6 * 3600, 24 * 3600, 7 * 24 * 3600, 28 * 24 * 3600)
_BACKFILL = """
INSERT INTO metric_rollups (project_id, metric, subject_kind, subject_id, scope, span,
    span_start, points, low, high, low_at, high_at, ci_low, ci_high, n, undefined,
    undefined_at, reason, computed_at, snapshot_id)
SELECT project_id, metric, subject_kind, subject_id, scope, {span}, as_of / {width} * {width},
    count(*), min(value), max(value),
    min(CASE WHEN value IS NOT NULL THEN as_of END),
    max(CASE WHEN value IS NOT NULL THEN as_of END),
    min(ci_low), max(ci_high), max(n),
    sum(CASE WHEN value IS NULL THEN 1 ELSE 0 END),
    min(CASE WHEN value IS NULL THEN as_of END),
    min(CASE WHEN value IS NULL THEN reason END),
    max(computed_at), max(snapshot_id)
FROM metric_points
WHERE subject_kind <> 'pair'
GROUP BY project_id, metric, subject_kind, subject_id, scope, as_of / {width}
"""


def upgrade() -> None:
    op.create_table(
        "metric_rollups",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("subject_kind", sa.String(length=8), nullable=False),
        sa.Column("subject_id", sa.String(length=401), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("span", sa.Integer(), nullable=False),
        sa.Column("span_start", sa.BigInteger(), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("low_at", sa.BigInteger(), nullable=True),
        sa.Column("high_at", sa.BigInteger(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("n", sa.BigInteger(), nullable=True),
        sa.Column("undefined", sa.BigInteger(), nullable=False),
        sa.Column("undefined_at", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("computed_at", sa.BigInteger(), nullable=False),
        sa.Column("snapshot_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_metric_rollups_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "project_id",
            "metric",
            "subject_kind",
            "subject_id",
            "scope",
            "span",
            "span_start",
            name=op.f("pk_metric_rollups"),
        ),
    )
    for span in _LEVELS:
        op.execute(_BACKFILL.format(span=span, width=span * 1_000_000))
    op.create_table(
        "snapshot_counts",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("snapshots", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_snapshot_counts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "scope", name=op.f("pk_snapshot_counts")),
    )
    op.execute(
        "INSERT INTO snapshot_counts (project_id, scope, snapshots) "
        "SELECT project_id, scope, count(*) FROM snapshots GROUP BY project_id, scope"
    )


def downgrade() -> None:
    op.drop_table("snapshot_counts")
    op.drop_table("metric_rollups")
