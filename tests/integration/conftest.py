"""Databases for integration tests: every test runs on SQLite and on PostgreSQL.

- PostgreSQL: one database per test session (per pytest-xdist worker: ``auditor_t_<8 hex>``),
  migrated to head once and dropped at the end; each test starts from empty tables: DELETE in
  dependency order (children first) plus a reset of every sequence, in one round trip. TRUNCATE
  of the 25 tables cost 668-865 ms a test (a new file per table, the truncate guards); this
  costs tens of milliseconds on the same machine (issue 23).
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
from sqlalchemy import text
from sqlalchemy.engine import Engine, make_url

from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.demo_run import DemoRun, shared_demo, shared_directory
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


def _delete_order(connection: psycopg.Connection) -> list[str]:
    """The tables, children before parents (foreign keys), so DELETE never trips a key."""
    tables = [
        row[0]
        for row in connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'alembic_version' ORDER BY tablename"
        )
    ]
    parents: dict[str, set[str]] = {t: set() for t in tables}
    for child, parent in connection.execute(
        "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c "
        "JOIN pg_namespace n ON n.oid = c.connamespace "
        "WHERE c.contype = 'f' AND n.nspname = 'public'"
    ):
        child, parent = child.strip('"'), parent.strip('"')
        if child in parents and parent != child:
            parents[child].add(parent)
    # The labels' references are kept by triggers, not foreign keys (migration 0001): every
    # table with a ``<table>_guard_delete`` trigger is a parent of labels.
    for (parent,) in connection.execute(
        "SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname LIKE '%\\_guard\\_delete'"
    ):
        parents["labels"].add(parent.strip('"'))
    order: list[str] = []  # parents first, then reversed: children first
    placed: set[str] = set()

    def place(table: str, path: tuple[str, ...] = ()) -> None:
        if table in placed:
            return
        if table in path:
            raise AssertionError(f"foreign keys form a cycle through {table}")
        for parent in sorted(parents[table]):
            place(parent, (*path, table))
        placed.add(table)
        order.append(table)

    for table in tables:
        place(table)
    return order[::-1]


_RESET_SQL: dict[str, str] = {}


def _reset_statement(connection: psycopg.Connection, url: str) -> str:
    """DELETE every table (children first) and restart every sequence: what
    ``TRUNCATE ... RESTART IDENTITY`` did, built once per database."""
    if url not in _RESET_SQL:
        deletes = [f'DELETE FROM "{table}";' for table in _delete_order(connection)]
        sequences = [
            f"SELECT setval('\"{name}\"', {start}, false);"
            for name, start in connection.execute(
                "SELECT sequencename, start_value FROM pg_sequences WHERE schemaname = 'public'"
            )
        ]
        _RESET_SQL[url] = "\n".join(["BEGIN;", *deletes, *sequences, "COMMIT;"])
    return _RESET_SQL[url]


def _empty_all(url: str) -> None:
    with psycopg.connect(_libpq(url), autocommit=True) as connection:
        connection.execute("SET synchronous_commit = off")  # a test database: no fsync wait
        connection.execute(_reset_statement(connection, url).encode())


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
    _empty_all(url)
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


@pytest.fixture(scope="session")
def pinned_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The whole pinned demo (seed 7), run once per session for every worker
    (``tests/demo_run.py``)."""
    return shared_demo(shared_directory(tmp_path_factory))
