"""A write that cannot get its lock in time answers 503 database_busy, wherever it waits
(issue 23 item 4): the labels COPY runs on psycopg itself, so its LockNotAvailable arrives
unwrapped by SQLAlchemy, and was answered 500."""

from __future__ import annotations

import sqlite3
import threading

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from auditor.api import create_app
from auditor.errors import WriteConflict
from auditor.services.access.keys import create_key
from auditor.services.projects.projects import create_project
from auditor.storage.db import is_connection_error, is_lock_timeout, make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import make_settings


def test_the_driver_errors_of_a_lock_timeout_are_recognised_by_type() -> None:
    busy = sqlite3.OperationalError("any words")
    busy.sqlite_errorcode = 5  # type: ignore[attr-defined]  # SQLITE_BUSY
    assert is_lock_timeout(busy)
    assert is_lock_timeout(OperationalError("INSERT", {}, busy))
    assert is_lock_timeout(psycopg.errors.LockNotAvailable("any words"))
    wrapped = RuntimeError("a service wrapped it")
    wrapped.__cause__ = psycopg.errors.LockNotAvailable("x")
    assert is_lock_timeout(wrapped)
    # The words alone are not enough: only the type or the code says "busy".
    assert not is_lock_timeout(sqlite3.OperationalError("database is locked"))
    assert not is_lock_timeout(psycopg.errors.UniqueViolation("x"))
    assert not is_lock_timeout(ValueError("lock timeout"))


def test_a_lost_server_is_recognised_by_type_and_code_not_by_words() -> None:
    refused = psycopg.OperationalError("anything at all")  # no SQLSTATE: the server never answered
    assert is_connection_error(refused)
    assert is_connection_error(OperationalError("SELECT 1", {}, refused))
    assert is_connection_error(psycopg.errors.AdminShutdown("x"))  # 57P01
    assert is_connection_error(psycopg.errors.ConnectionFailure("x"))  # 08006
    assert not is_connection_error(psycopg.errors.UndefinedTable("connection refused"))
    assert not is_connection_error(sqlite3.OperationalError("connection refused"))
    assert not is_connection_error(ValueError("could not connect"))


@pytest.mark.postgres
def test_a_lock_timeout_in_the_labels_copy_answers_503(
    migrated_postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.conftest import _empty_all

    url = migrated_postgres_url
    _empty_all(url)
    engine = make_engine(url)
    try:
        create_project(UnitOfWork(engine), "busy", ["yes", "no"])
        secret = create_key(UnitOfWork(engine), "busy", "ingest")[1]
    finally:
        engine.dispose()
    monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=200")  # libpq reads it at connect
    holding, release = threading.Event(), threading.Event()

    def hold_labels() -> None:  # another writer holds the labels table, as a long import does
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(dsn) as connection, connection.transaction():
            connection.execute("LOCK TABLE labels IN SHARE MODE")  # COPY needs ROW EXCLUSIVE
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold_labels, daemon=True)
    holder.start()
    assert holding.wait(30)
    try:
        app = create_app(make_settings(url))
        with TestClient(app, raise_server_exceptions=False) as client:
            response = client.post(
                "/api/v1/projects/busy/labels",
                json={"labels": [{"item": "i1", "rater": "a", "label": "yes"}]},
                headers={"Authorization": f"Bearer {secret}"},
            )
    finally:
        release.set()
        holder.join(30)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "database_busy"
    assert response.headers["Retry-After"]


@pytest.mark.postgres
def test_a_client_key_taken_by_a_concurrent_batch_is_a_write_conflict(
    migrated_postgres_url: str,
) -> None:
    """Another transaction inserts the same client key between our check and our COPY: the
    unique index (named, not matched by words) makes it a WriteConflict, which the services
    retry."""
    from tests.integration.conftest import _empty_all

    url = migrated_postgres_url
    _empty_all(url)
    engine = make_engine(url)
    try:
        create_project(UnitOfWork(engine), "race", ["yes", "no"])
        uow = UnitOfWork(engine)
        with uow:
            project = uow.require_project("race")
            item = uow.labels.resolve_items(project.id, ["i1"])["i1"]
            rater = uow.labels.resolve_raters(project.id, {"a": None})["a"][0]
            category = {c.name: c.id for c in uow.projects.categories(project.id)}["yes"]
            uow.commit()
        row = (project.id, item, rater, None, category, 1, 1, "k1", None)
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(dsn) as other:
            other.execute(  # the other batch: inserted, not yet committed
                "INSERT INTO labels (project_id, item_id, rater_id, category_id, labeled_at, "
                "received_at, client_key) VALUES (%s, %s, %s, %s, 1, 1, 'k1')",
                (project.id, item, rater, category),
            )
            threading.Timer(0.5, other.commit).start()  # ours waits on the index, then fails
            with pytest.raises(WriteConflict), uow:
                uow.labels.insert_labels([row])
    finally:
        engine.dispose()
