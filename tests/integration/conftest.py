"""Databases for integration tests: every test runs on SQLite and on PostgreSQL.

- PostgreSQL: one database per test session (``auditor_t_<8 hex>``), migrated to head once and
  dropped at the end; each test starts from empty tables (TRUNCATE ... RESTART IDENTITY).
- SQLite: a migrated template file per session, copied to a fresh file for each test.

Tests that need an unmigrated database of their own use ``scratch_database_url``.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine, make_url

from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.services import POSTGRES_ADMIN_URL, require_postgres

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database; dropped (even with open connections) afterwards."""
    name = f"auditor_t_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def migrated_postgres_url() -> Iterator[str]:
    require_postgres()
    with postgres_database() as url:
        migrate.upgrade(url)
        yield url


@pytest.fixture(scope="session")
def migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


def _truncate_all(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            tables = [t for t in inspect(connection).get_table_names() if t != "alembic_version"]
            quoted = ", ".join(f'"{t}"' for t in tables)
            connection.execute(text(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database at the head revision, on the parametrized backend."""
    if backend == "sqlite":
        template = request.getfixturevalue("migrated_sqlite_template")
        target = tmp_path / "auditor.db"
        shutil.copyfile(template, target)
        return f"sqlite:///{target}"
    require_postgres()
    url = str(request.getfixturevalue("migrated_postgres_url"))
    _truncate_all(url)
    return url


@pytest.fixture
def scratch_database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty, unmigrated database of this test's own."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'scratch.db'}"
        return
    require_postgres()
    with postgres_database() as url:
        yield url


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def uow(engine: Engine) -> UnitOfWork:
    return UnitOfWork(engine)


@pytest.fixture
def count_rows(engine: Engine) -> Callable[[], dict[str, int]]:
    """Rows per table of this issue: the 'nothing was written' check."""

    def count() -> dict[str, int]:
        with engine.connect() as connection:
            return {
                table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
                for table in ("projects", "categories", "items", "raters", "sessions", "labels")
            }

    return count
