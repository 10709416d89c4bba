"""Alerts: channels, rules, per-subject states, the evaluation log, the outbox, silences.

Timestamps are BIGINT microseconds since the epoch (``auditor.storage.db.UtcMicros``).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

_json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "alert_channels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("secret", sa.String(length=200), nullable=True),
        sa.Column("internal", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("email_host", sa.String(length=255), nullable=True),
        sa.Column("email_port", sa.Integer(), nullable=True),
        sa.Column("email_from", sa.String(length=320), nullable=True),
        sa.Column("email_to", _json, nullable=True),
        sa.Column("starttls", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("username", sa.String(length=200), nullable=True),
        sa.Column("password", sa.String(length=200), nullable=True),
        sa.Column("timeout_seconds", sa.Float(), server_default=sa.text("10"), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "kind <> 'email' OR (email_host IS NOT NULL AND email_port IS NOT NULL "
            "AND email_from IS NOT NULL AND email_to IS NOT NULL)",
            name=op.f("ck_alert_channels_email"),
        ),
        sa.CheckConstraint(
            "kind <> 'webhook' OR (url IS NOT NULL AND secret IS NOT NULL)",
            name=op.f("ck_alert_channels_webhook"),
        ),
        sa.CheckConstraint(
            "kind IN ('webhook', 'email', 'log')", name=op.f("ck_alert_channels_kind")
        ),
        sa.CheckConstraint("timeout_seconds > 0", name=op.f("ck_alert_channels_timeout_positive")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_channels_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_channels")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_alert_channels_project_id_name")),
    )
    op.create_table(
        "alert_rules",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("subject_kind", sa.String(length=16), nullable=False),
        sa.Column(
            "subject_ref", sa.String(length=200), server_default=sa.text("''"), nullable=False
        ),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("condition_kind", sa.String(length=32), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("drop_by", sa.Float(), nullable=True),
        sa.Column("lookback_seconds", sa.BigInteger(), nullable=True),
        sa.Column("min_n", sa.Integer(), nullable=False),
        sa.Column("for_seconds", sa.BigInteger(), nullable=False),
        sa.Column("keep_firing_for_seconds", sa.BigInteger(), nullable=False),
        sa.Column("severity", sa.String(length=8), nullable=False),
        sa.Column("repeat_interval_seconds", sa.BigInteger(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "(condition_kind = 'drop' AND drop_by > 0 AND lookback_seconds > 0 "
            "AND threshold IS NULL) OR (condition_kind <> 'drop' AND threshold IS NOT NULL "
            "AND drop_by IS NULL AND lookback_seconds IS NULL)",
            name=op.f("ck_alert_rules_condition"),
        ),
        sa.CheckConstraint(
            "condition_kind IN ('below', 'confidently_below', 'not_confidently_above', 'drop')",
            name=op.f("ck_alert_rules_condition_kind"),
        ),
        sa.CheckConstraint(
            "severity IN ('info', 'warning', 'critical')", name=op.f("ck_alert_rules_severity")
        ),
        sa.CheckConstraint(
            "subject_kind IN ('project', 'rater', 'every_rater', 'model')",
            name=op.f("ck_alert_rules_subject_kind"),
        ),
        sa.CheckConstraint(
            "for_seconds >= 0 AND keep_firing_for_seconds >= 0",
            name=op.f("ck_alert_rules_durations"),
        ),
        sa.CheckConstraint("min_n >= 1", name=op.f("ck_alert_rules_min_n")),
        sa.CheckConstraint(
            "repeat_interval_seconds IS NULL OR repeat_interval_seconds > 0",
            name=op.f("ck_alert_rules_repeat"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_rules_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_rules")),
    )
    with op.batch_alter_table("alert_rules", schema=None) as batch_op:
        batch_op.create_index("ix_alert_rules_project_id", ["project_id"], unique=False)

    op.create_table(
        "alert_silences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.String(length=200), nullable=True),
        sa.Column("subject_kind", sa.String(length=16), nullable=True),
        sa.Column("subject_ref", sa.String(length=200), nullable=True),
        sa.Column("starts_at", sa.BigInteger(), nullable=False),
        sa.Column("ends_at", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "subject_kind IS NULL OR subject_kind IN ('project', 'rater', 'model')",
            name=op.f("ck_alert_silences_subject_kind"),
        ),
        sa.CheckConstraint(
            "(subject_kind IS NULL) = (subject_ref IS NULL)", name=op.f("ck_alert_silences_subject")
        ),
        sa.CheckConstraint("ends_at > starts_at", name=op.f("ck_alert_silences_ends_after_start")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_silences_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_silences")),
    )
    with op.batch_alter_table("alert_silences", schema=None) as batch_op:
        batch_op.create_index(
            "ix_alert_silences_project_id_ends_at", ["project_id", "ends_at"], unique=False
        )

    op.create_table(
        "alert_evaluations",
        sa.Column("id", _big_id, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.String(length=200), nullable=False),
        sa.Column("subject_key", sa.String(length=220), nullable=False),
        sa.Column("snapshot_id", _big_id, nullable=False),
        sa.Column("evaluated_at", sa.BigInteger(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("judged_value", sa.Float(), nullable=True),
        sa.Column("limit_value", sa.Float(), nullable=True),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("n", sa.BigInteger(), nullable=True),
        sa.Column("lookback_value", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("from_status", sa.String(length=20), nullable=False),
        sa.Column("to_status", sa.String(length=20), nullable=False),
        sa.Column("silence_id", sa.Integer(), nullable=True),
        sa.Column("event_ids", _json, nullable=False),
        sa.Column("suppressed_event_ids", _json, nullable=False),
        sa.CheckConstraint(
            "from_status IN ('ok', 'pending', 'firing', 'insufficient_data')",
            name=op.f("ck_alert_evaluations_from_status"),
        ),
        sa.CheckConstraint(
            "to_status IN ('ok', 'pending', 'firing', 'insufficient_data')",
            name=op.f("ck_alert_evaluations_to_status"),
        ),
        sa.CheckConstraint(
            "verdict IN ('breach', 'clear', 'insufficient', 'retired')",
            name=op.f("ck_alert_evaluations_verdict"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_evaluations_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_alert_evaluations_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_evaluations")),
        sa.UniqueConstraint(
            "rule_id",
            "subject_key",
            "snapshot_id",
            name=op.f("uq_alert_evaluations_rule_id_subject_key_snapshot_id"),
        ),
    )
    with op.batch_alter_table("alert_evaluations", schema=None) as batch_op:
        batch_op.create_index(
            "ix_alert_evaluations_project_id_evaluated_at",
            ["project_id", "evaluated_at"],
            unique=False,
        )

    op.create_table(
        "alert_outbox",
        sa.Column("id", _big_id, nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.String(length=200), nullable=False),
        sa.Column("subject_key", sa.String(length=220), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.BigInteger(), nullable=False),
        sa.Column("claimed_until", sa.BigInteger(), nullable=True),
        sa.Column("claimed_by", sa.String(length=100), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("sent_at", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(
            "kind IN ('firing', 'resolved', 'repeat')", name=op.f("ck_alert_outbox_kind")
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'sent', 'dead')", name=op.f("ck_alert_outbox_status")
        ),
        sa.CheckConstraint("attempts >= 0", name=op.f("ck_alert_outbox_attempts")),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["alert_channels.id"],
            name=op.f("fk_alert_outbox_channel_id_alert_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_outbox_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_outbox")),
        sa.UniqueConstraint(
            "event_id", "channel_id", name=op.f("uq_alert_outbox_event_id_channel_id")
        ),
    )
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.create_index(
            "ix_alert_outbox_project_id_created_at", ["project_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "ix_alert_outbox_status_next_attempt_at", ["status", "next_attempt_at"], unique=False
        )

    op.create_table(
        "alert_rule_channels",
        sa.Column("rule_id", sa.String(length=200), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["alert_channels.id"],
            name=op.f("fk_alert_rule_channels_channel_id_alert_channels"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["alert_rules.id"],
            name=op.f("fk_alert_rule_channels_rule_id_alert_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("rule_id", "channel_id", name=op.f("pk_alert_rule_channels")),
    )
    op.create_table(
        "alert_states",
        sa.Column("rule_id", sa.String(length=200), nullable=False),
        sa.Column("subject_key", sa.String(length=220), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("subject_kind", sa.String(length=16), nullable=False),
        sa.Column("subject_ref", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("evaluated_at", sa.BigInteger(), nullable=True),
        sa.Column("status_since", sa.BigInteger(), nullable=True),
        sa.Column("breach_since", sa.BigInteger(), nullable=True),
        sa.Column("episode_start", sa.BigInteger(), nullable=True),
        sa.Column("clear_since", sa.BigInteger(), nullable=True),
        sa.Column("data_missing_since", sa.BigInteger(), nullable=True),
        sa.Column("firing_notified", sa.Boolean(), nullable=False),
        sa.Column("last_notified_at", sa.BigInteger(), nullable=True),
        sa.Column("repeat_seq", sa.Integer(), nullable=False),
        sa.Column("last_snapshot_id", sa.BigInteger(), nullable=True),
        sa.Column("last_value", sa.Float(), nullable=True),
        sa.Column("last_reason", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "status IN ('ok', 'pending', 'firing', 'insufficient_data')",
            name=op.f("ck_alert_states_status"),
        ),
        sa.CheckConstraint("repeat_seq >= 0", name=op.f("ck_alert_states_repeat_seq")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_alert_states_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["alert_rules.id"],
            name=op.f("fk_alert_states_rule_id_alert_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("rule_id", "subject_key", name=op.f("pk_alert_states")),
    )
    with op.batch_alter_table("alert_states", schema=None) as batch_op:
        batch_op.create_index("ix_alert_states_project_id", ["project_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alert_states", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_states_project_id")

    op.drop_table("alert_states")
    op.drop_table("alert_rule_channels")
    with op.batch_alter_table("alert_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_outbox_status_next_attempt_at")
        batch_op.drop_index("ix_alert_outbox_project_id_created_at")

    op.drop_table("alert_outbox")
    with op.batch_alter_table("alert_evaluations", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_evaluations_project_id_evaluated_at")

    op.drop_table("alert_evaluations")
    with op.batch_alter_table("alert_silences", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_silences_project_id_ends_at")

    op.drop_table("alert_silences")
    with op.batch_alter_table("alert_rules", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_rules_project_id")

    op.drop_table("alert_rules")
    op.drop_table("alert_channels")
