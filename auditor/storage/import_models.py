"""Import records: every file import and every API batch, so that an import can be listed,
recognised when the same file comes again, and reverted.

Labels carry their import's id (``labels.import_id``, no foreign key: a label insert must not
pay a row-by-row check, see migration 0001). ``first_label_id``/``last_label_id`` bound the ids
the import wrote, so a revert deletes through the (project_id, id) index without an index of
its own on import_id. A record is never deleted except with its project: a reverted import
keeps its row with ``reverted_at`` set, which is how the history shows where a revert happened.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, BigId, UtcMicros

SOURCE_MAX = 500
CREATED_BY_MAX = 100
HASH_MAX = 64


class ImportRecord(Base):
    __tablename__ = "imports"
    __table_args__ = (
        Index("ix_imports_project_id_content_hash", "project_id", "content_hash"),
        CheckConstraint("rows >= 0 AND inserted >= 0 AND duplicates >= 0", name="counts"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(SOURCE_MAX))
    content_hash: Mapped[str | None] = mapped_column(String(HASH_MAX))
    rows: Mapped[int] = mapped_column(Integer)
    inserted: Mapped[int] = mapped_column(Integer)
    duplicates: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[str] = mapped_column(String(CREATED_BY_MAX))
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
    first_label_id: Mapped[int | None] = mapped_column(BigId)
    last_label_id: Mapped[int | None] = mapped_column(BigId)
    reverted_at: Mapped[datetime | None] = mapped_column(UtcMicros)
    reverted_labels: Mapped[int | None] = mapped_column(Integer)
