"""Import records, the natural-identity lookup of stored labels, reverts and project deletion.

``ImportRepository`` (``uow.imports``) works in the unit of work's session; nothing here commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select, text
from sqlalchemy.orm import Session as OrmSession

from auditor.storage import import_leftovers as leftovers
from auditor.storage.db import affected
from auditor.storage.import_models import ImportRecord
from auditor.storage.models import Label, Project
from auditor.storage.schema import METADATA

# Namespace of the two-key advisory lock that queues a project's file imports (the recompute
# lock, ``snapshot_repository``, uses "audi").
_IMPORT_LOCK_NAMESPACE = 0x696D7074  # "impt"

# (position in the batch, item id, rater id, session id or None, labeled_at in microseconds)
Identity = tuple[int, int, int, int | None, int]


@dataclass(frozen=True)
class ImportRow:
    """One import as stored (``auditor.storage.import_models.ImportRecord``)."""

    id: int
    project_id: int
    source: str
    content_hash: str | None
    rows: int
    inserted: int
    duplicates: int
    created_by: str
    created_at: datetime
    first_label_id: int | None
    last_label_id: int | None
    reverted_at: datetime | None
    reverted_labels: int | None


def _row(record: ImportRecord) -> ImportRow:
    return ImportRow(**{f.name: getattr(record, f.name) for f in fields(ImportRow)})


class ImportRepository:
    """Import records, the natural-identity lookup of stored labels, reverts and project
    deletion, inside the unit of work's session (``uow.imports``)."""

    def __init__(self, db: OrmSession) -> None:
        self.db = db

    def create_import(
        self,
        project_id: int,
        source: str,
        content_hash: str | None,
        created_by: str,
        now: datetime,
    ) -> int:
        """A new record (counts 0), its lower label-id bound taken now: every id this
        transaction inserts later is above every id visible now (the sequence only grows).
        Returns its id."""
        before = self.db.scalar(select(func.max(Label.id)).where(Label.project_id == project_id))
        record = ImportRecord(
            project_id=project_id,
            source=source[:500],
            content_hash=content_hash,
            rows=0,
            inserted=0,
            duplicates=0,
            created_by=created_by[:100],
            created_at=now,
            first_label_id=int(before or 0),
        )
        self.db.add(record)
        self.db.flush()
        return record.id

    def lock_for_import(self, project_id: int) -> None:
        """Queue behind any other file import of the project until this transaction ends.

        PostgreSQL: ``pg_advisory_xact_lock`` (released by the server at commit, rollback or a
        lost connection). Taken before the "same content already imported" check, so of two
        imports of one file started together the second waits for the first to commit and
        then finds it (refused, or its rows recognised as duplicates); without it both checks
        ran before either committed and both wrote. SQLite: nothing to do, the write
        transaction (BEGIN IMMEDIATE) already holds the database's one write lock.
        """
        connection = self.db.connection()
        if connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:namespace, :project)"),
                {"namespace": _IMPORT_LOCK_NAMESPACE, "project": project_id},
            )

    def finish_import(self, import_id: int, rows: int, inserted: int, duplicates: int) -> None:
        record = self.db.get_one(ImportRecord, import_id)
        record.rows, record.inserted, record.duplicates = rows, inserted, duplicates
        record.last_label_id = self.db.scalar(
            select(func.max(Label.id)).where(Label.project_id == record.project_id)
        )
        self.db.flush()

    def find_by_hash(self, project_id: int, content_hash: str) -> ImportRow | None:
        """The latest import of this content that is not reverted."""
        statement = (
            select(ImportRecord)
            .where(
                ImportRecord.project_id == project_id,
                ImportRecord.content_hash == content_hash,
                ImportRecord.reverted_at.is_(None),
            )
            .order_by(ImportRecord.id.desc())
            .limit(1)
        )
        found = self.db.scalars(statement).first()
        return None if found is None else _row(found)

    def list_imports(self, project_id: int) -> list[ImportRow]:
        statement = select(ImportRecord).where(ImportRecord.project_id == project_id)
        return [_row(r) for r in self.db.scalars(statement.order_by(ImportRecord.id))]

    def get_import(
        self, project_id: int, import_id: int, *, for_update: bool = False
    ) -> ImportRow | None:
        """The record; ``for_update``: its row locked until the transaction ends (PostgreSQL;
        on SQLite the write transaction is the lock), so two reverts of one import queue and
        the second sees the first's mark."""
        statement = select(ImportRecord).where(
            ImportRecord.project_id == project_id, ImportRecord.id == import_id
        )
        if for_update:
            statement = statement.with_for_update()
        found = self.db.scalars(statement).one_or_none()
        return None if found is None else _row(found)

    @staticmethod
    def _of_import(record: ImportRow) -> list[ColumnElement[bool]]:
        """The labels of one import: the id bounds let the (project_id, id) index find them,
        the import_id keeps labels of concurrent writers inside the bounds."""
        where = [
            Label.project_id == record.project_id,
            Label.id > (record.first_label_id or 0),
            Label.import_id == record.id,
        ]
        if record.last_label_id is not None:
            where.append(Label.id <= record.last_label_id)
        return where

    def delete_import_labels(self, record: ImportRow) -> int:
        """Delete the labels of one import."""
        return affected(self.db.execute(delete(Label).where(*self._of_import(record))))

    def last_revert_at(self, project_id: int) -> datetime | None:
        """When an import of the project was last reverted (None: never)."""
        return self.db.scalar(
            select(func.max(ImportRecord.reverted_at)).where(ImportRecord.project_id == project_id)
        )

    def revert(self, record: ImportRow, at: datetime) -> int:
        """Delete the import's labels and mark it reverted at ``at``; how many went. The
        sessions, items and raters of those labels are fitted to what is left
        (``import_leftovers``)."""
        before = leftovers.touched(self.db, self._of_import(record))
        deleted = self.delete_import_labels(record)
        leftovers.tidy(self.db, record.project_id, before)
        stored = self.db.get_one(ImportRecord, record.id)
        stored.reverted_at, stored.reverted_labels = at, deleted
        self.db.flush()
        return deleted

    def stored_identities(
        self, project_id: int, rows: Sequence[Identity]
    ) -> dict[int, tuple[int, int | None]]:
        """{position: (stored category id, its import id)} for rows whose natural identity
        (item, rater, session, labeled_at) is already stored in the project."""
        if not rows:
            return {}
        connection = self.db.connection()
        if connection.dialect.name == "postgresql":
            columns = list(zip(*rows, strict=True))
            query = text(
                "SELECT t.pos, l.category_id, l.import_id FROM unnest("
                "CAST(:pos AS int[]), CAST(:item AS bigint[]), CAST(:rater AS int[]), "
                "CAST(:session AS bigint[]), CAST(:at AS bigint[])) "
                "AS t(pos, item_id, rater_id, session_id, labeled_at) "
                "JOIN labels l ON l.project_id = :project AND l.item_id = t.item_id "
                "AND l.rater_id = t.rater_id AND l.labeled_at = t.labeled_at "
                "AND l.session_id IS NOT DISTINCT FROM t.session_id"
            )
            names = ("pos", "item", "rater", "session", "at")
            params: dict[str, Any] = {
                name: list(col) for name, col in zip(names, columns, strict=True)
            }
            params["project"] = project_id
            found = connection.execute(query, params)
        else:
            connection.exec_driver_sql(
                "CREATE TEMP TABLE IF NOT EXISTS incoming_identity "
                "(pos INTEGER, item_id INTEGER, rater_id INTEGER, session_id INTEGER, "
                "labeled_at INTEGER)"
            )
            connection.exec_driver_sql("DELETE FROM incoming_identity")
            connection.exec_driver_sql(
                "INSERT INTO incoming_identity VALUES (?, ?, ?, ?, ?)", list(rows)
            )
            # CROSS JOIN fixes the loop order in SQLite: each incoming row probes the identity
            # index. Left to the planner (no statistics), it scanned labels per incoming row.
            found = connection.exec_driver_sql(
                "SELECT t.pos, l.category_id, l.import_id FROM incoming_identity t "
                "CROSS JOIN labels l WHERE l.project_id = ? AND l.item_id = t.item_id "
                "AND l.rater_id = t.rater_id AND l.labeled_at = t.labeled_at "
                "AND l.session_id IS t.session_id",
                (project_id,),
            )
        return {int(pos): (int(category), imported) for pos, category, imported in found}

    def delete_project(self, project_id: int) -> dict[str, int]:
        """Delete a project and every row it owns, children before parents; rows per table.

        Explicit deletes rather than ON DELETE CASCADE: labels first (the parents' guard triggers
        refuse deleting a referenced item), and a RESTRICT edge (a rule's channels) cannot stop
        the cascade half-way. Tables are found on the metadata, so a table added later with a
        project_id (or a foreign key to such a table) is covered without a change here.
        """
        deleted: dict[str, int] = {}
        owned = {t.name for t in METADATA.tables.values() if "project_id" in t.c}
        tables = [t for t in reversed(METADATA.sorted_tables) if t.name != "projects"]
        tables.sort(key=lambda t: t.name != "labels")  # stable: labels first, the rest in order
        for table in tables:
            if "project_id" in table.c:
                statement = delete(table).where(table.c.project_id == project_id)
            else:
                parents = [fk for fk in table.foreign_keys if fk.column.table.name in owned]
                if not parents:
                    continue
                fk = parents[0]
                ids = select(fk.column).where(fk.column.table.c.project_id == project_id)
                statement = delete(table).where(fk.parent.in_(ids))
            count = affected(self.db.execute(statement))
            if count:
                deleted[table.name] = count
        self.db.execute(delete(Project).where(Project.id == project_id))
        deleted["projects"] = 1
        return deleted
