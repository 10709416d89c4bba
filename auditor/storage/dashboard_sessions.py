"""Dashboard sign-in sessions: one row per session, stored server-side with an expiry.

The cookie carries a random session id (256 bits); only its SHA-256 is stored, so reading the
table does not hand out live sessions (the reasoning of ``key_models`` for keys applies).
Signing out deletes the row, so a copied cookie dies with the session.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String, delete, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from auditor.storage.db import Base, UtcMicros


class DashboardSession(Base):
    __tablename__ = "dashboard_sessions"
    __table_args__ = (Index("ix_dashboard_sessions_expires_at", "expires_at"),)

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
    expires_at: Mapped[datetime] = mapped_column(UtcMicros)


class DashboardSessionRepository:
    """Dashboard sessions by the hash of their id (``uow.dashboard_sessions``)."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def add_session(self, id_hash: str, created_at: datetime, expires_at: datetime) -> None:
        self.db.add(DashboardSession(id_hash=id_hash, created_at=created_at, expires_at=expires_at))

    def session_alive(self, id_hash: str, now: datetime) -> bool:
        found = self.db.scalar(
            select(DashboardSession.id_hash).where(
                DashboardSession.id_hash == id_hash, DashboardSession.expires_at > now
            )
        )
        return found is not None

    def delete_session(self, id_hash: str) -> None:
        self.db.execute(delete(DashboardSession).where(DashboardSession.id_hash == id_hash))

    def delete_expired(self, now: datetime) -> None:
        self.db.execute(delete(DashboardSession).where(DashboardSession.expires_at <= now))
