"""API keys and idempotency records of the HTTP API (``uow.keys``): plain values out, the
unit of work's session owns the transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from auditor.storage.key_models import ApiKey, IdempotencyRecord
from auditor.storage.models import Project


@dataclass(frozen=True)
class KeyRow:
    id: int
    project_id: int
    project_slug: str
    role: str
    name: str | None
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def _key_row(key: ApiKey, slug: str) -> KeyRow:
    return KeyRow(
        key.id,
        key.project_id,
        slug,
        key.role,
        key.name,
        key.prefix,
        key.created_at,
        key.revoked_at,
        key.last_used_at,
    )


class KeyRepository:
    """Keys by project or by hash, and the claim / finish / find of idempotency records."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def add_key(self, project_id: int, role: str, name: str | None, prefix: str,
                key_hash: str, created_at: datetime) -> int:  # fmt: skip
        key = ApiKey(
            project_id=project_id,
            role=role,
            name=name,
            prefix=prefix,
            key_hash=key_hash,
            created_at=created_at,
        )
        self.db.add(key)
        self.db.flush()
        return key.id

    def key_by_hash(self, key_hash: str) -> KeyRow | None:
        found = self.db.execute(
            select(ApiKey, Project.slug)
            .join(Project, Project.id == ApiKey.project_id)
            .where(ApiKey.key_hash == key_hash)
        ).first()
        return None if found is None else _key_row(found[0], found[1])

    def list_keys(self, project_id: int) -> list[KeyRow]:
        rows = self.db.execute(
            select(ApiKey, Project.slug)
            .join(Project, Project.id == ApiKey.project_id)
            .where(ApiKey.project_id == project_id)
            .order_by(ApiKey.id)
        ).all()
        return [_key_row(key, slug) for key, slug in rows]

    def revoke_key(self, project_id: int, key_id: int, at: datetime) -> bool | None:
        """True: revoked now; False: it already was; None: no such key in the project."""
        key = self.db.execute(
            select(ApiKey).where(ApiKey.project_id == project_id, ApiKey.id == key_id)
        ).scalar()
        if key is None:
            return None
        if key.revoked_at is not None:
            return False
        key.revoked_at = at
        self.db.flush()
        return True

    def touch_key(self, key_id: int, at: datetime, older_than: datetime) -> None:
        """Record use, at most once per period: a write per request would serialise readers."""
        self.db.execute(
            update(ApiKey)
            .where(ApiKey.id == key_id)
            .where(or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at < older_than))
            .values(last_used_at=at)
        )

    def claim_idempotency_key(
        self, project_id: int, key: str, request_hash: str, created_at: datetime
    ) -> bool:
        """Insert a pending record; False when the key is already recorded (by a committed
        transaction: on PostgreSQL a concurrent insert of the same key waits for the other
        transaction to end, then does nothing if it committed)."""
        insert = (
            postgresql.insert if self.db.get_bind().dialect.name == "postgresql" else sqlite.insert
        )
        statement = (
            insert(IdempotencyRecord)
            .values(
                project_id=project_id,
                idempotency_key=key,
                request_hash=request_hash,
                status=0,
                response={},
                created_at=created_at,
            )
            .on_conflict_do_nothing(index_elements=["project_id", "idempotency_key"])
            .returning(IdempotencyRecord.id)
        )
        return self.db.execute(statement).scalar() is not None

    def finish_idempotency_key(self, project_id: int, key: str, response: dict[str, Any]) -> None:
        """Store the response of a successful post (only successes are remembered: a rejected
        batch rolls its record back). ``status`` tells a finished record (200) from a pending
        one (0)."""
        self.db.execute(
            update(IdempotencyRecord)
            .where(
                IdempotencyRecord.project_id == project_id, IdempotencyRecord.idempotency_key == key
            )
            .values(status=200, response=response)
        )

    def find_idempotency_record(
        self, project_id: int, key: str
    ) -> tuple[str, dict[str, Any]] | None:
        """(request hash, response) of a recorded key."""
        row = self.db.execute(
            select(IdempotencyRecord.request_hash, IdempotencyRecord.response).where(
                IdempotencyRecord.project_id == project_id, IdempotencyRecord.idempotency_key == key
            )
        ).first()
        return None if row is None else (row[0], dict(row[1]))
