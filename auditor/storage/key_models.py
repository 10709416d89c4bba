"""Tables of the HTTP API: per-project API keys and idempotency records of label posts.

API keys: the secret is shown once and only its SHA-256 is stored. The secret is 32 random
bytes (256 bits), so a fast unsalted hash is enough: salting and slow hashing defend
low-entropy passwords against dictionary attacks, and there is no dictionary for 2^256 values.
Lookup is by the hash itself (unique index), so no key is ever compared by the application.
``prefix`` is the first characters of the key, stored in clear to let people tell keys apart.

Idempotency records: one row per (project, Idempotency-Key). The unique key makes the database
the referee when two requests with one key race: the second insert waits for the first
transaction and then finds its row (see ``auditor.services.ingest.idempotent_posts``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, BigId, UtcMicros

KEY_PREFIX_MAX = 16
KEY_NAME_MAX = 200
IDEMPOTENCY_KEY_MAX = 200

_Json = JSON().with_variant(JSONB(), "postgresql")


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (
        UniqueConstraint("key_hash"),
        Index("ix_api_keys_project_id", "project_id"),
        CheckConstraint("role IN ('ingest', 'read', 'admin', 'label-studio')", name="role"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    name: Mapped[str | None] = mapped_column(String(KEY_NAME_MAX))
    prefix: Mapped[str] = mapped_column(String(KEY_PREFIX_MAX))
    key_hash: Mapped[str] = mapped_column(String(64))  # hex SHA-256 of the whole key
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcMicros)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcMicros)


class IdempotencyRecord(Base):
    __tablename__ = "idempotency_records"
    __table_args__ = (
        UniqueConstraint("project_id", "idempotency_key"),
        CheckConstraint("idempotency_key <> ''", name="key_not_empty"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str] = mapped_column(String(IDEMPOTENCY_KEY_MAX))
    request_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[int] = mapped_column(Integer)
    response: Mapped[dict[str, Any]] = mapped_column(_Json)
    # Indexed: the scheduler prunes records older than the idempotency expiry.
    created_at: Mapped[datetime] = mapped_column(UtcMicros, index=True)
