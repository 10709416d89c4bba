"""Secrets of this deployment, made once and shared by every process through the database.

``public_ids`` keys the permutation that turns global row ids into the opaque ids a project
key sees (``auditor.services.access.public_ids``). It is created by migration 0007; a database made
some other way gets one on first use.
"""

from __future__ import annotations

from sqlalchemy import String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

__all__ = ["InstanceSecret", "InstanceSecretRepository", "Session"]

from auditor.storage.db import Base


class InstanceSecret(Base):
    __tablename__ = "instance_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))


class InstanceSecretRepository:
    """Secrets of this deployment by name (``uow.secrets``)."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def get_secret(self, name: str) -> str | None:
        return self.db.scalar(select(InstanceSecret.value).where(InstanceSecret.name == name))

    def add_secret(self, name: str, value: str) -> None:
        self.db.add(InstanceSecret(name=name, value=value))
