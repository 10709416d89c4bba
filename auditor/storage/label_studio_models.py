"""Tables of the Label Studio integration: the project's settings, and the webhook calls it
refused.

The settings are integration config, not a statistic's setting: where Label Studio is, a
token for its API, and how its annotations map to labels (read by the webhook, ``auditor
import``, the sync and the repeat planner alike). One row per project, absent until set.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, ForeignKey, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, UtcMicros

FIELD_MAX = 200
URL_MAX = 2000
TOKEN_MAX = 2000
MESSAGE_MAX = 500
PREDICTION_MODES = ("model", "ignore")


class LabelStudioSettings(Base):
    __tablename__ = "label_studio_settings"
    __table_args__ = (
        CheckConstraint(
            "predictions IN (" + ", ".join(f"'{m}'" for m in PREDICTION_MODES) + ")",
            name="predictions",
        ),
        CheckConstraint("sync_minutes IS NULL OR sync_minutes > 0", name="sync_minutes"),
    )

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    item_field: Mapped[str | None] = mapped_column(String(FIELD_MAX))  # "data.<key>"
    from_name: Mapped[str | None] = mapped_column(String(FIELD_MAX))
    predictions: Mapped[str] = mapped_column(String(16), server_default="model")
    url: Mapped[str | None] = mapped_column(String(URL_MAX))
    ls_project: Mapped[int | None] = mapped_column(Integer)
    token: Mapped[str | None] = mapped_column(String(TOKEN_MAX))  # never shown
    sync_minutes: Mapped[int | None] = mapped_column(Integer)  # the scheduled sync; None: off
    last_sync_at: Mapped[datetime | None] = mapped_column(UtcMicros)
    last_sync_status: Mapped[str | None] = mapped_column(String(MESSAGE_MAX))


class LabelStudioRejection(Base):
    """Webhook calls of one project answered with an error (by HTTP status): Label Studio
    sends each event once, so every one of them is a lost change until a sync.
    ``pending``: counted after the project's latest snapshot (the next one shows it)."""

    __tablename__ = "label_studio_rejections"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    status: Mapped[int] = mapped_column(Integer, primary_key=True)
    total: Mapped[int] = mapped_column(BigInteger)
    since_sync: Mapped[int] = mapped_column(BigInteger)
    last_at: Mapped[datetime] = mapped_column(UtcMicros)
    last_message: Mapped[str] = mapped_column(String(MESSAGE_MAX))
    pending: Mapped[bool] = mapped_column(Boolean, server_default=false())
