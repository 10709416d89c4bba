"""The unit of work: one transaction, and the repositories that work inside it.

Services take a unit of work and decide when to commit; nothing below commits on its own::

    with uow:
        project = uow.require_project("demo")
        ...
        uow.commit()

Leaving the block without ``commit()`` (or by an exception) rolls everything back. A unit of
work can be entered again after it is left; each entry is a new transaction. Each repository
is an attribute working in the transaction's session, and returns plain values or records.

It is the services' only door to the database: the work that needs a connection of its own
(the project's recompute lock, the columnar load of a project's labels, the outbox claim, a
file's staging connection, a second unit of work beside this one) is a method here, and every
door translates the drivers' errors into ``auditor.errors``' typed ones
(``auditor.storage.driver_errors``): busy, unavailable, write conflict.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Self

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from auditor.storage.alert_log_repository import AlertLog, claim_due
from auditor.storage.alert_records import OutboxRecord
from auditor.storage.alert_repository import AlertRepository
from auditor.storage.dashboard_sessions import DashboardSessionRepository
from auditor.storage.driver_errors import driver_errors_translated, translated
from auditor.storage.health_repository import HealthRepository
from auditor.storage.import_repository import ImportRepository
from auditor.storage.instance_secrets import InstanceSecretRepository
from auditor.storage.kept_repository import KeptRepository
from auditor.storage.key_repository import KeyRepository
from auditor.storage.label_loader import (
    EVERY_LABEL,
    LabelRange,
    LoadedLabels,
    fetch_columns_adbc,
    fetch_columns_sqlite,
    load_project_labels,
    postgres_adbc_uri,
)
from auditor.storage.label_studio_repository import LabelStudioRepository
from auditor.storage.label_studio_settings_repository import LabelStudioSettingsRepository
from auditor.storage.project_repository import ProjectRecord, ProjectRepository
from auditor.storage.read_repository import ReadRepository
from auditor.storage.repeat_repository import RepeatRepository
from auditor.storage.repositories import LabelStore
from auditor.storage.snapshot_repository import ProjectLock, SnapshotRepository
from auditor.storage.snapshot_repository import project_lock as _project_lock
from auditor.storage.staging import Staging

if TYPE_CHECKING:
    import numpy as np


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
        one), for the doors below that open connections of their own."""
        return self.engine if isinstance(self.engine, Engine) else self.engine.engine

    def reader(self) -> UnitOfWork:
        """A read-only unit of work on the same database, beside this one (a read before this
        one's transaction, so that no lock is held across a network call)."""
        return UnitOfWork(self.engine, read_only=True)

    def another(self) -> UnitOfWork:
        """A unit of work of its own on the same database (a thread's, say)."""
        return UnitOfWork(self.engine)

    @contextmanager
    def staging(self) -> Iterator[Staging]:
        """A file's staging connection (``auditor.storage.staging``) for the block."""
        with driver_errors_translated(), Staging(self.engine) as staging:
            yield staging

    @staticmethod
    def on_staging(staging: Staging) -> UnitOfWork:
        """The unit of work whose transaction runs on ``staging``'s connection (the import's
        write, which reads the staged rows)."""
        return UnitOfWork(staging.bind())

    @contextmanager
    def project_lock(self, project_id: int) -> Iterator[ProjectLock]:
        """The project's recompute lock for the block (``snapshot_repository.project_lock``:
        ``acquired`` is False when another recompute holds it)."""
        with driver_errors_translated(), _project_lock(self.root_engine, project_id) as lock:
            yield lock

    def load_labels(self, project_id: int, within: LabelRange | None = None) -> LoadedLabels:
        """Every label of the project (or those ``within`` a range) as columns, on a
        connection of its own (``label_loader.load_project_labels``)."""
        with driver_errors_translated():
            return load_project_labels(self.root_engine, project_id, within=within or EVERY_LABEL)

    def label_columns(
        self, project_id: int, within: LabelRange | None = None
    ) -> dict[str, np.ndarray]:
        """The project's label id columns (or those ``within`` a range), unordered (ADBC on
        PostgreSQL, ``group_concat`` on SQLite), on a connection of its own."""
        engine = self.root_engine
        chosen = within or EVERY_LABEL
        with driver_errors_translated():
            if engine.dialect.name == "postgresql":
                return fetch_columns_adbc(postgres_adbc_uri(engine), project_id, within=chosen)
            with engine.connect() as connection:
                return fetch_columns_sqlite(connection, project_id, chosen)

    def claim_outbox(
        self, now: datetime, lease_until: datetime, worker: str, limit: int
    ) -> list[OutboxRecord]:
        """Claim up to ``limit`` due outbox rows for ``worker`` and commit, in a transaction of
        its own (``alert_log_repository.claim_due``)."""
        with driver_errors_translated():
            return claim_due(self.root_engine, now, lease_until, worker, limit)

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
            with driver_errors_translated():
                self._session.rollback()  # a no-op after commit()
        finally:
            self._session.close()
            self._active = False
        typed = None if exc is None else translated(exc)
        if typed is not None:  # a driver's error leaves the transaction as a typed one
            raise typed from exc

    def require_project(self, slug: str, *, for_update: bool = False) -> ProjectRecord:
        """Project ``slug``; ``NotFound`` ("no project 'x'") when there is none. The one
        lookup of a project by slug for every service."""
        return self.projects.require(slug, for_update=for_update)

    def commit(self) -> None:
        if self.read_only:
            raise RuntimeError("a read-only unit of work cannot commit")
        with driver_errors_translated():
            self._session.commit()

    def rollback(self) -> None:
        with driver_errors_translated():
            self._session.rollback()
