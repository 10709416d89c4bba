"""Tables of recompute health (issue 11): failures per project and the scheduler heartbeat.

- ``recompute_failures``: one row per project that ever failed a recompute for a reason that
  retrying at once would not fix (a bug, bad stored data). ``failures`` counts them all;
  ``consecutive`` counts the run since the last success and sets the backoff: the scan leaves
  the project alone until ``retry_after``. A success resets ``consecutive`` and ``retry_after``
  and keeps the history (count, last error, when).
- ``scheduler_heartbeats``: one row per scheduler (the Celery beat's scan), written at the end
  of each scan, so any API process can tell whether recomputes are being scheduled.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, UtcMicros


class RecomputeFailure(Base):
    __tablename__ = "recompute_failures"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    failures: Mapped[int] = mapped_column(Integer)
    consecutive: Mapped[int] = mapped_column(Integer)
    last_error: Mapped[str] = mapped_column(Text)
    last_failed_at: Mapped[datetime] = mapped_column(UtcMicros)
    retry_after: Mapped[datetime | None] = mapped_column(UtcMicros)


class SchedulerHeartbeat(Base):
    __tablename__ = "scheduler_heartbeats"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    beat_at: Mapped[datetime] = mapped_column(UtcMicros)
    interval_seconds: Mapped[float] = mapped_column(Float)
    last_error: Mapped[str | None] = mapped_column(Text)
