"""A project's Label Studio settings, and the webhook calls it refused
(``uow.label_studio_settings``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from auditor.storage.key_models import ApiKey
from auditor.storage.label_studio_models import (
    MESSAGE_MAX,
    LabelStudioRejection,
    LabelStudioSettings,
)
from auditor.storage.models import Project

_settings = LabelStudioSettings.__table__
_rejections = LabelStudioRejection.__table__


@dataclass(frozen=True)
class SettingsRecord:
    """How the project reads Label Studio (docs/integrations.md, "Settings")."""

    item_field: str | None = None
    from_name: str | None = None
    predictions: str = "model"
    url: str | None = None
    ls_project: int | None = None
    token: str | None = None
    sync_minutes: int | None = None
    last_sync_at: datetime | None = None
    last_sync_status: str | None = None


@dataclass(frozen=True)
class RejectionRecord:
    project: str
    status: int
    total: int
    since_sync: int
    last_at: datetime
    last_message: str


_FIELDS = (
    "item_field",
    "from_name",
    "predictions",
    "url",
    "ls_project",
    "token",
    "sync_minutes",
    "last_sync_at",
    "last_sync_status",
)


class LabelStudioSettingsRepository:
    def __init__(self, db: Session) -> None:
        self.db = db

    def _insert(self):  # type: ignore[no-untyped-def]
        dialect = self.db.get_bind().dialect.name
        return postgresql.insert if dialect == "postgresql" else sqlite.insert

    def get(self, project_id: int) -> SettingsRecord | None:
        row = self.db.execute(
            select(*(_settings.c[name] for name in _FIELDS)).where(
                _settings.c.project_id == project_id
            )
        ).first()
        return None if row is None else SettingsRecord(**row._mapping)

    def put(self, project_id: int, record: SettingsRecord) -> None:
        values = {name: getattr(record, name) for name in _FIELDS}
        statement = self._insert()(_settings).values(project_id=project_id, **values)
        self.db.execute(statement.on_conflict_do_update(index_elements=["project_id"], set_=values))

    def synced(self, project_id: int, at: datetime, status: str) -> None:
        """Record when a sync ended and how ("ok: ..." or its error)."""
        self.db.execute(
            update(_settings)
            .where(_settings.c.project_id == project_id)
            .values(last_sync_at=at, last_sync_status=status[:MESSAGE_MAX])
        )

    def scheduled(self) -> list[tuple[int, int, datetime | None]]:
        """(project id, minutes, last sync) of every project with a scheduled sync."""
        rows = self.db.execute(
            select(
                _settings.c.project_id, _settings.c.sync_minutes, _settings.c.last_sync_at
            ).where(_settings.c.sync_minutes.is_not(None))
        )
        return [(int(r.project_id), int(r.sync_minutes), r.last_sync_at) for r in rows]

    def uses_label_studio(self, project_id: int) -> bool:
        """Settings, a key for the webhook, or a refused webhook call."""
        found = self.db.execute(
            select(_settings.c.project_id)
            .where(_settings.c.project_id == project_id)
            .union_all(
                select(ApiKey.project_id).where(
                    ApiKey.project_id == project_id, ApiKey.role == "label-studio"
                ),
                select(_rejections.c.project_id).where(_rejections.c.project_id == project_id),
            )
            .limit(1)
        ).first()
        return found is not None

    # Refused webhook calls

    def reject(self, slug: str, status: int, message: str, at: datetime) -> bool:
        """Count one refused call of project ``slug`` (False: no such project)."""
        project_id = self.db.execute(select(Project.id).where(Project.slug == slug)).scalar()
        if project_id is None:
            return False
        text = message[:MESSAGE_MAX]
        statement = self._insert()(_rejections).values(
            project_id=project_id,
            status=status,
            total=1,
            since_sync=1,
            last_at=at,
            last_message=text,
            pending=True,
        )
        self.db.execute(
            statement.on_conflict_do_update(
                index_elements=["project_id", "status"],
                set_={
                    "total": _rejections.c.total + 1,
                    "since_sync": _rejections.c.since_sync + 1,
                    "last_at": at,
                    "last_message": text,
                    "pending": True,
                },
            )
        )
        return True

    def rejections(self, project_id: int | None = None) -> list[RejectionRecord]:
        """Every project's counts (or one project's), by status."""
        statement = select(
            Project.slug,
            _rejections.c.status,
            _rejections.c.total,
            _rejections.c.since_sync,
            _rejections.c.last_at,
            _rejections.c.last_message,
        ).join(Project, Project.id == _rejections.c.project_id)
        if project_id is not None:
            statement = statement.where(_rejections.c.project_id == project_id)
        rows = self.db.execute(statement.order_by(Project.slug, _rejections.c.status))
        return [
            RejectionRecord(
                r.slug, int(r.status), int(r.total), int(r.since_sync), r.last_at, r.last_message
            )
            for r in rows
        ]

    def since_sync(self, project_id: int) -> int:
        return sum(r.since_sync for r in self.rejections(project_id))

    def recovered(self, project_id: int) -> None:
        """A sync made the labels whole again: the calls lost before it are counted no more."""
        self.db.execute(
            update(_rejections)
            .where(_rejections.c.project_id == project_id)
            .values(since_sync=0, pending=True)
        )

    def pending(self) -> set[int]:
        """Projects whose refused calls changed since their latest snapshot."""
        rows = self.db.execute(
            select(_rejections.c.project_id).where(_rejections.c.pending.is_(True)).distinct()
        )
        return {int(project_id) for (project_id,) in rows}

    def shown(self, project_id: int) -> None:
        """The latest snapshot shows the counts."""
        self.db.execute(
            update(_rejections).where(_rejections.c.project_id == project_id).values(pending=False)
        )
