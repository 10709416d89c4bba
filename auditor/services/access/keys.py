"""API keys: create (shown once), authenticate, list, revoke.

A key looks like ``aud_<43 url-safe characters>`` (32 random bytes). Only its SHA-256 is stored
(see ``auditor.storage.key_models`` for why a fast hash is right for random keys); the first 12
characters are kept in clear as ``prefix`` so a person can tell keys apart in a list.

Roles (what each may do is decided by the API, see docs/api.md):
    ingest  post labels, read the project and its categories
    read    every read
    admin   every read and write of the project (labels, categories, alert rules, silences)
    label-studio  Label Studio's webhook route only (and no other route takes it)
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from auditor.errors import Invalid, NotFound
from auditor.storage.db import utc_now
from auditor.storage.key_repository import KeyRow
from auditor.storage.unit_of_work import UnitOfWork

KEY_SCHEME = "aud_"
PREFIX_LENGTH = 12
# last_used_at is refreshed at most this often per key: a write per request would make every
# read a write.
TOUCH_PERIOD = timedelta(minutes=1)


class Role(StrEnum):
    INGEST = "ingest"
    READ = "read"
    ADMIN = "admin"
    LABEL_STUDIO = "label-studio"


@dataclass(frozen=True)
class Principal:
    """Who is calling: one key of one project."""

    key_id: int
    project_id: int
    project_slug: str
    role: Role
    use_due: bool = False  # last_used_at is older than TOUCH_PERIOD


@dataclass(frozen=True)
class KeyView:
    id: int
    project: str
    role: str
    name: str | None
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_secret() -> str:
    return KEY_SCHEME + secrets.token_urlsafe(32)


def _role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        known = ", ".join(r.value for r in Role)
        raise Invalid(f"role must be one of {known}; got {role!r}") from None


def _project_id(uow: UnitOfWork, slug: str) -> int:
    return uow.require_project(slug).id


def _view(row: KeyRow) -> KeyView:
    return KeyView(
        row.id,
        row.project_slug,
        row.role,
        row.name,
        row.prefix,
        row.created_at,
        row.revoked_at,
        row.last_used_at,
    )


def create_key(
    uow: UnitOfWork, slug: str, role: str, name: str | None = None
) -> tuple[KeyView, str]:
    """A new key for the project; returns its view and the secret (the only time it exists
    outside the caller's hands)."""
    checked = _role(role)
    secret = new_secret()
    now = utc_now()
    with uow:
        project_id = _project_id(uow, slug)
        key_id = uow.keys.add_key(
            project_id,
            checked.value,
            name,
            secret[:PREFIX_LENGTH],
            hash_key(secret),
            now,
        )
        uow.commit()
    view = KeyView(key_id, slug, checked.value, name, secret[:PREFIX_LENGTH], now, None, None)
    return view, secret


def list_keys(uow: UnitOfWork, slug: str) -> list[KeyView]:
    with uow:
        return [_view(row) for row in uow.keys.list_keys(_project_id(uow, slug))]


def revoke_key(uow: UnitOfWork, slug: str, key_id: int) -> bool:
    """Revoke a key of the project; False when it already was revoked."""
    with uow:
        done = uow.keys.revoke_key(_project_id(uow, slug), key_id, utc_now())
        if done is None:
            raise NotFound(f"project {slug!r} has no key {key_id}")
        uow.commit()
    return done


def authenticate(uow: UnitOfWork, secret: str) -> Principal | None:
    """The principal of a live key, or None (unknown or revoked: the caller answers 401).
    Reads only (pass a read-only unit of work); ``record_use`` is the write, when due."""
    if not secret.startswith(KEY_SCHEME) or len(secret) > 200:
        return None
    with uow:
        row = uow.keys.key_by_hash(hash_key(secret))
    if row is None or row.revoked_at is not None:
        return None
    due = row.last_used_at is None or row.last_used_at < utc_now() - TOUCH_PERIOD
    return Principal(row.id, row.project_id, row.project_slug, Role(row.role), due)


def record_use(uow: UnitOfWork, key_id: int) -> None:
    """Set the key's last_used_at (at most once per TOUCH_PERIOD, checked in SQL)."""
    now = utc_now()
    with uow:
        uow.keys.touch_key(key_id, now, now - TOUCH_PERIOD)
        uow.commit()
