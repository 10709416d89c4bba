"""Dashboard sessions: random ids handed out at sign-in, checked on every page, revoked at
sign-out (see ``auditor.storage.dashboard_sessions``)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from auditor.storage.unit_of_work import UnitOfWork

SESSION_LIFETIME = timedelta(hours=12)


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def open_session(uow: UnitOfWork, lifetime: timedelta = SESSION_LIFETIME) -> str:
    """A new session id (shown once, to the browser); expired sessions are swept here."""
    session_id = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    with uow:
        uow.dashboard_sessions.delete_expired(now)
        uow.dashboard_sessions.add_session(_hash(session_id), now, now + lifetime)
        uow.commit()
    return session_id


def session_valid(uow: UnitOfWork, session_id: str) -> bool:
    if not session_id or len(session_id) > 100:
        return False
    with uow:
        return uow.dashboard_sessions.session_alive(_hash(session_id), datetime.now(UTC))


def close_session(uow: UnitOfWork, session_id: str) -> None:
    with uow:
        uow.dashboard_sessions.delete_session(_hash(session_id))
        uow.commit()
