"""The unit of work: one transaction, and the repositories that work inside it.

Services take a unit of work and decide when to commit; nothing below commits on its own::

    with uow:
        project = uow.require_project("demo")
        ...
        uow.commit()

Leaving the block without ``commit()`` (or by an exception) rolls everything back. A unit of
work can be entered again after it is left; each entry is a new transaction. Each repository
is an attribute working in the transaction's session, and returns plain values or records.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from auditor.storage.alert_log_repository import AlertLog
from auditor.storage.alert_repository import AlertRepository
from auditor.storage.dashboard_sessions import DashboardSessionRepository
from auditor.storage.health_repository import HealthRepository
from auditor.storage.import_repository import ImportRepository
from auditor.storage.instance_secrets import InstanceSecretRepository
from auditor.storage.kept_repository import KeptRepository
from auditor.storage.key_repository import KeyRepository
from auditor.storage.label_studio_repository import LabelStudioRepository
from auditor.storage.label_studio_settings_repository import LabelStudioSettingsRepository
from auditor.storage.project_repository import ProjectRecord, ProjectRepository
from auditor.storage.read_repository import ReadRepository
from auditor.storage.repeat_repository import RepeatRepository
from auditor.storage.repositories import LabelStore
from auditor.storage.snapshot_repository import SnapshotRepository


class UnitOfWork:
    """One transaction against the database; ``projects`` and ``labels`` work inside it."""

    _session: Session
    projects: ProjectRepository
    labels: LabelStore
    alerts: AlertRepository
    alert_log: AlertLog
    imports: ImportRepository
    label_studio: LabelStudioRepository
    label_studio_settings: LabelStudioSettingsRepository
    repeats: RepeatRepository
    keys: KeyRepository
    reads: ReadRepository
    health: HealthRepository
    snapshots: SnapshotRepository
    dashboard_sessions: DashboardSessionRepository
    secrets: InstanceSecretRepository
    kept: KeptRepository

    def __init__(self, engine: Engine | Connection, *, read_only: bool = False) -> None:
        # A Connection: the transaction runs on it (a staged import's own connection).
        # SQLite: a writer takes the write lock when it begins (BEGIN IMMEDIATE), so two
        # writers queue on the busy timeout instead of one failing when it upgrades a read.
        self.engine = engine if read_only else engine.execution_options(sqlite_begin="IMMEDIATE")
        self.read_only = read_only
        self._active = False

    @property
    def root_engine(self) -> Engine:
        """The engine behind this unit of work (a Connection's own engine when it is bound to
        one), for the work that opens connections of its own: locks, columnar reads, claims."""
        return self.engine if isinstance(self.engine, Engine) else self.engine.engine

    @property
    def session_for_tests(self) -> Session:
        """The open ORM session, for tests that inspect rows directly. Services never use it:
        they go through the repositories above."""
        return self._session

    def __enter__(self) -> Self:
        if self._active:
            raise RuntimeError("this unit of work is already in use; nest services differently")
        self._session = Session(bind=self.engine, expire_on_commit=False, autoflush=True)
        self.projects = ProjectRepository(self._session)
        self.labels = LabelStore(self._session)
        self.alerts = AlertRepository(self._session)
        self.alert_log = AlertLog(self._session)
        self.imports = ImportRepository(self._session)
        self.label_studio = LabelStudioRepository(self._session)
        self.label_studio_settings = LabelStudioSettingsRepository(self._session)
        self.repeats = RepeatRepository(self._session)
        self.keys = KeyRepository(self._session)
        self.reads = ReadRepository(self._session)
        self.health = HealthRepository(self._session)
        self.snapshots = SnapshotRepository(self._session)
        self.dashboard_sessions = DashboardSessionRepository(self._session)
        self.secrets = InstanceSecretRepository(self._session)
        self.kept = KeptRepository(self._session)
        self._active = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._session.rollback()  # a no-op after commit()
        finally:
            self._session.close()
            self._active = False

    def require_project(self, slug: str, *, for_update: bool = False) -> ProjectRecord:
        """Project ``slug``; ``NotFound`` ("no project 'x'") when there is none. The one
        lookup of a project by slug for every service."""
        return self.projects.require(slug, for_update=for_update)

    def commit(self) -> None:
        if self.read_only:
            raise RuntimeError("a read-only unit of work cannot commit")
        self._session.commit()

    def rollback(self) -> None:
        self._session.rollback()
