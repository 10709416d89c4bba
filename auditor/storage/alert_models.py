"""Alert tables: channels, rules, per-subject state, the evaluation log, the outbox, silences.

Design notes (see ``docs/alerts.md`` and ``auditor/alerting`` for the semantics):

- ``alert_states`` mirrors ``auditor.alerting.AlertState`` one to one; a state row, its
  evaluation log row and its outbox rows are written in the recompute's write transaction.
- ``alert_evaluations`` is unique on (rule, subject, snapshot): a redelivered recompute's
  evaluation inserts nothing and must not step the state machine again.
- ``alert_outbox`` is unique on (event id, channel): inserting a notice twice is a no-op.
  ``body`` is the exact JSON the receiver gets, so every retry is byte-identical. A sender
  claims rows with a lease (``claimed_until``) and commits the claim before any network I/O.
- The log and the outbox keep ``rule_id`` without a foreign key: history outlives a removed
  rule. States belong to their rule and go with it.

Timestamps are ``UtcMicros``: event ids hash the episode start with microseconds, so a column
that truncated it would change ids.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, BigId, UtcMicros

RULE_ID_MAX = 200
NAME_MAX = 100
SUBJECT_KEY_MAX = 220  # "rater:" + an external id of up to 200 characters
SUBJECT_REF_MAX = 200
EVENT_ID_LENGTH = 32
KIND_MAX = 32

_Json = JSON().with_variant(JSONB(), "postgresql")
# A BIGINT reference to a BigId column (INTEGER on SQLite, as the key it points at).
_BigRef = BigInteger().with_variant(Integer, "sqlite")

SUBJECT_KINDS = ("project", "rater", "every_rater", "model")
CONDITION_KINDS = (
    "below",
    "confidently_below",
    "not_confidently_above",
    "drop",
    "above",
    "confidently_above",
    "rater_change",
)
SEVERITIES = ("info", "warning", "critical")
STATUSES = ("ok", "pending", "firing", "insufficient_data")
VERDICTS = ("breach", "clear", "insufficient", "retired")
EVENT_KINDS = ("firing", "resolved", "repeat")
OUTBOX_STATUSES = ("pending", "sent", "dead")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class AlertChannel(Base):
    """A destination for notices. ``kind`` names a plugin (``auditor.notifiers.kinds``) and
    ``config`` holds its settings as the plugin validated them, so a new kind needs no new
    column. The config may hold secrets (a webhook's signing secret, an SMTP password):
    never logged, never returned by the API."""

    __tablename__ = "alert_channels"
    __table_args__ = (
        UniqueConstraint("project_id", "name"),
        CheckConstraint("timeout_seconds > 0", name="timeout_positive"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    kind: Mapped[str] = mapped_column(String(KIND_MAX))
    config: Mapped[dict[str, Any]] = mapped_column(_Json)
    timeout_seconds: Mapped[float] = mapped_column(Float, server_default=text("10"))
    created_at: Mapped[datetime] = mapped_column(UtcMicros)


class AlertRule(Base):
    __tablename__ = "alert_rules"
    __table_args__ = (
        CheckConstraint(_in("subject_kind", SUBJECT_KINDS), name="subject_kind"),
        CheckConstraint(_in("condition_kind", CONDITION_KINDS), name="condition_kind"),
        CheckConstraint(_in("severity", SEVERITIES), name="severity"),
        CheckConstraint(
            "(condition_kind = 'drop' AND drop_by > 0 AND lookback_seconds > 0 "
            "AND threshold IS NULL) OR (condition_kind <> 'drop' AND threshold IS NOT NULL "
            "AND drop_by IS NULL AND lookback_seconds IS NULL)",
            name="condition",
        ),
        CheckConstraint("min_n >= 1", name="min_n"),
        CheckConstraint("for_seconds >= 0 AND keep_firing_for_seconds >= 0", name="durations"),
        CheckConstraint(
            "repeat_interval_seconds IS NULL OR repeat_interval_seconds > 0", name="repeat"
        ),
        Index("ix_alert_rules_project_id", "project_id"),
    )

    id: Mapped[str] = mapped_column(String(RULE_ID_MAX), primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    metric: Mapped[str] = mapped_column(String(64))
    subject_kind: Mapped[str] = mapped_column(String(16))
    subject_ref: Mapped[str] = mapped_column(String(SUBJECT_REF_MAX), server_default=text("''"))
    scope: Mapped[str] = mapped_column(String(16))
    condition_kind: Mapped[str] = mapped_column(String(32))
    threshold: Mapped[float | None] = mapped_column(Float)
    drop_by: Mapped[float | None] = mapped_column(Float)
    lookback_seconds: Mapped[int | None] = mapped_column(BigInteger)
    margin: Mapped[float | None] = mapped_column(Float)
    z: Mapped[float | None] = mapped_column(Float)
    min_n: Mapped[int] = mapped_column(Integer)
    for_seconds: Mapped[int] = mapped_column(BigInteger)
    keep_firing_for_seconds: Mapped[int] = mapped_column(BigInteger)
    severity: Mapped[str] = mapped_column(String(8))
    repeat_interval_seconds: Mapped[int | None] = mapped_column(BigInteger)
    enabled: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UtcMicros)


class AlertRuleChannel(Base):
    """Which channels receive a rule's notices. A channel in use cannot be removed (RESTRICT)."""

    __tablename__ = "alert_rule_channels"

    rule_id: Mapped[str] = mapped_column(
        ForeignKey("alert_rules.id", ondelete="CASCADE"), primary_key=True
    )
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("alert_channels.id", ondelete="RESTRICT"), primary_key=True
    )


class AlertStateRow(Base):
    __tablename__ = "alert_states"
    __table_args__ = (
        CheckConstraint(_in("status", STATUSES), name="status"),
        CheckConstraint("repeat_seq >= 0", name="repeat_seq"),
        Index("ix_alert_states_project_id", "project_id"),
    )

    rule_id: Mapped[str] = mapped_column(
        ForeignKey("alert_rules.id", ondelete="CASCADE"), primary_key=True
    )
    subject_key: Mapped[str] = mapped_column(String(SUBJECT_KEY_MAX), primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    subject_kind: Mapped[str] = mapped_column(String(16))
    subject_ref: Mapped[str] = mapped_column(String(SUBJECT_REF_MAX))
    status: Mapped[str] = mapped_column(String(20))
    evaluated_at: Mapped[datetime | None] = mapped_column(UtcMicros)
    status_since: Mapped[datetime | None] = mapped_column(UtcMicros)
    breach_since: Mapped[datetime | None] = mapped_column(UtcMicros)
    episode_start: Mapped[datetime | None] = mapped_column(UtcMicros)
    clear_since: Mapped[datetime | None] = mapped_column(UtcMicros)
    data_missing_since: Mapped[datetime | None] = mapped_column(UtcMicros)
    firing_notified: Mapped[bool] = mapped_column(Boolean)
    last_notified_at: Mapped[datetime | None] = mapped_column(UtcMicros)
    repeat_seq: Mapped[int] = mapped_column(Integer)
    last_snapshot_id: Mapped[int | None] = mapped_column(BigInteger)
    last_value: Mapped[float | None] = mapped_column(Float)
    last_reason: Mapped[str | None] = mapped_column(Text)


class AlertDetector(Base):
    """The incremental state of a rater's change detector (``auditor.alerting.change``), as
    JSON; the row with ``subject_key`` '' holds the rule's label watermark."""

    __tablename__ = "alert_detectors"

    rule_id: Mapped[str] = mapped_column(
        ForeignKey("alert_rules.id", ondelete="CASCADE"), primary_key=True
    )
    subject_key: Mapped[str] = mapped_column(String(SUBJECT_KEY_MAX), primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(Text)


class AlertEvaluation(Base):
    """The log: one row per rule, subject and snapshot, with the number it was judged on."""

    __tablename__ = "alert_evaluations"
    __table_args__ = (
        UniqueConstraint("rule_id", "subject_key", "snapshot_id"),
        Index("ix_alert_evaluations_project_id_evaluated_at", "project_id", "evaluated_at"),
        CheckConstraint(_in("verdict", VERDICTS), name="verdict"),
        CheckConstraint(_in("from_status", STATUSES), name="from_status"),
        CheckConstraint(_in("to_status", STATUSES), name="to_status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rule_id: Mapped[str] = mapped_column(String(RULE_ID_MAX))
    subject_key: Mapped[str] = mapped_column(String(SUBJECT_KEY_MAX))
    snapshot_id: Mapped[int] = mapped_column(
        _BigRef, ForeignKey("snapshots.id", ondelete="CASCADE")
    )
    evaluated_at: Mapped[datetime] = mapped_column(UtcMicros)
    verdict: Mapped[str] = mapped_column(String(16))
    judged_value: Mapped[float | None] = mapped_column(Float)
    limit_value: Mapped[float | None] = mapped_column(Float)
    value: Mapped[float | None] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int | None] = mapped_column(BigInteger)
    lookback_value: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str] = mapped_column(Text)
    from_status: Mapped[str] = mapped_column(String(20))
    to_status: Mapped[str] = mapped_column(String(20))
    silence_id: Mapped[int | None] = mapped_column(Integer)
    event_ids: Mapped[list[str]] = mapped_column(_Json)
    suppressed_event_ids: Mapped[list[str]] = mapped_column(_Json)


class AlertOutbox(Base):
    __tablename__ = "alert_outbox"
    __table_args__ = (
        UniqueConstraint("event_id", "channel_id"),
        Index("ix_alert_outbox_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_alert_outbox_project_id_created_at", "project_id", "created_at"),
        CheckConstraint(_in("status", OUTBOX_STATUSES), name="status"),
        CheckConstraint(_in("kind", EVENT_KINDS), name="kind"),
        CheckConstraint("attempts >= 0", name="attempts"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    event_id: Mapped[str] = mapped_column(String(EVENT_ID_LENGTH))
    channel_id: Mapped[int] = mapped_column(ForeignKey("alert_channels.id", ondelete="CASCADE"))
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rule_id: Mapped[str] = mapped_column(String(RULE_ID_MAX))
    subject_key: Mapped[str] = mapped_column(String(SUBJECT_KEY_MAX))
    kind: Mapped[str] = mapped_column(String(16))
    sequence: Mapped[int] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(8))
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcMicros)
    claimed_until: Mapped[datetime | None] = mapped_column(UtcMicros)
    claimed_by: Mapped[str | None] = mapped_column(String(100))
    last_error: Mapped[str | None] = mapped_column(Text)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
    sent_at: Mapped[datetime | None] = mapped_column(UtcMicros)


class AlertSilence(Base):
    __tablename__ = "alert_silences"
    __table_args__ = (
        CheckConstraint("ends_at > starts_at", name="ends_after_start"),
        CheckConstraint(
            "subject_kind IS NULL OR subject_kind IN ('project', 'rater', 'model')",
            name="subject_kind",
        ),
        CheckConstraint("(subject_kind IS NULL) = (subject_ref IS NULL)", name="subject"),
        Index("ix_alert_silences_project_id_ends_at", "project_id", "ends_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rule_id: Mapped[str | None] = mapped_column(String(RULE_ID_MAX))
    subject_kind: Mapped[str | None] = mapped_column(String(16))
    subject_ref: Mapped[str | None] = mapped_column(String(SUBJECT_REF_MAX))
    starts_at: Mapped[datetime] = mapped_column(UtcMicros)
    ends_at: Mapped[datetime] = mapped_column(UtcMicros)
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
