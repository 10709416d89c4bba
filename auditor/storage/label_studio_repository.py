"""What the Label Studio receiver remembers per annotation, and removing an annotation's label."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import bindparam, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from auditor.storage.db import affected
from auditor.storage.models import Label, LabelStudioAnnotation

_seen = LabelStudioAnnotation.__table__
_labels = Label.__table__


class LabelStudioRepository:
    """What the Label Studio receiver remembers per annotation (uow.label_studio)."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def find(self, project_id: int, ids: Iterable[str]) -> dict[str, tuple[int, bool]]:
        """{annotation id: (version, deleted)} of the ids seen before."""
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        statement = select(_seen.c.annotation_id, _seen.c.version, _seen.c.deleted).where(
            _seen.c.project_id == project_id,
            _seen.c.annotation_id.in_(bindparam("ids", expanding=True)),
        )
        rows = self.db.execute(statement, {"ids": wanted})
        return {row.annotation_id: (int(row.version), bool(row.deleted)) for row in rows}

    def remember(self, project_id: int, seen: dict[str, tuple[int, bool]]) -> None:
        """Store (version, deleted) per annotation id, replacing what was there."""
        if not seen:
            return
        dialect = self.db.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        rows = [
            {"project_id": project_id, "annotation_id": a, "version": v, "deleted": d}
            for a, (v, d) in seen.items()
        ]
        statement = insert(_seen)
        statement = statement.on_conflict_do_update(
            index_elements=["project_id", "annotation_id"],
            set_={"version": statement.excluded.version, "deleted": statement.excluded.deleted},
        )
        self.db.execute(statement, rows)

    def delete_labels(self, project_id: int, keys: Iterable[str]) -> int:
        """Remove the labels with these client keys; how many there were."""
        wanted = sorted(set(keys))
        if not wanted:
            return 0
        statement = delete(_labels).where(
            _labels.c.project_id == project_id,
            _labels.c.client_key.in_(bindparam("keys", expanding=True)),
        )
        return affected(self.db.execute(statement, {"keys": wanted}))
