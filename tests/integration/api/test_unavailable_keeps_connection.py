"""Issue 26 item 4: a 503 (database busy, database unavailable) is an answer like any other:
no traceback in the log, and the keep-alive connection stays open for the next request.

Before, the 503s were made by the catch-all exception handler, which Starlette runs inside
ServerErrorMiddleware: it re-raised after answering, uvicorn logged the traceback and closed
the connection, and a client's next request on it failed.

A real uvicorn server (in this process, so its log is captured) and one ``http.client``
connection reused for every request."""

from __future__ import annotations

import http.client
import json
import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from auditor.api import create_app
from auditor.services.access.keys import create_key
from auditor.services.projects.projects import create_project
from auditor.storage import db as storage_db
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import free_port, make_settings


@contextmanager
def uvicorn_server(url: str) -> Iterator[int]:
    port = free_port()
    config = uvicorn.Config(create_app(make_settings(url)), host="127.0.0.1", port=port,
                            log_level="info", lifespan="on")  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def _ask(connection: http.client.HTTPConnection, method: str, path: str, key: str,
         body: dict | None = None) -> tuple[int, dict, http.client.HTTPResponse]:  # fmt: skip
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    payload = None if body is None else json.dumps(body)
    connection.request(method, path, body=payload, headers=headers)
    response = connection.getresponse()
    return response.status, json.loads(response.read() or b"{}"), response


def _no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    shown = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert not shown, [r.getMessage() for r in shown]


def test_busy_answers_503_and_keeps_the_connection(
    migrated_sqlite_template: Path, tmp_path: Path, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(storage_db, "SQLITE_BUSY_TIMEOUT_MS", 300)
    target = tmp_path / "busy.db"
    shutil.copyfile(migrated_sqlite_template, target)
    url = f"sqlite:///{target}"
    engine = make_engine(url)
    create_project(UnitOfWork(engine), "p", ["yes", "no"])
    key = create_key(UnitOfWork(engine), "p", "ingest")[1]
    engine.dispose()
    labels = {"labels": [{"item": "i1", "rater": "r1", "label": "yes"}]}
    caplog.set_level(logging.INFO)
    with uvicorn_server(url) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        status, _, _ = _ask(connection, "GET", "/api/v1/projects/p", key)
        assert status == 200
        first = connection.sock
        holder = sqlite3.connect(target, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
        try:
            for _ in range(3):
                status, body, response = _ask(connection, "POST", "/api/v1/projects/p/labels",
                                              key, labels)  # fmt: skip
                assert status == 503, body
                assert body["error"]["code"] == "database_busy"
                assert response.getheader("Retry-After") == "5"
                assert response.getheader("Connection") != "close"
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        status, body, _ = _ask(connection, "POST", "/api/v1/projects/p/labels", key, labels)
        assert status == 200 and body["inserted"] == 1, body
        assert connection.sock is first  # the same connection all along
        connection.close()
    _no_tracebacks(caplog)


def test_unavailable_answers_503_and_keeps_the_connection(caplog) -> None:
    # Nothing listens on port 1: every database connection is refused.
    url = "postgresql+psycopg://postgres@127.0.0.1:1/none?connect_timeout=2"
    caplog.set_level(logging.INFO)
    with uvicorn_server(url) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        first = None
        for _ in range(3):
            status, body, response = _ask(
                connection, "GET", "/api/v1/projects/p", "aud_" + "k" * 40
            )
            assert status == 503, body
            assert body["error"]["code"] == "unavailable"
            assert response.getheader("Retry-After") is not None
            first = first or connection.sock
            assert connection.sock is first
        status, _, _ = _ask(connection, "GET", "/openapi.json", "k")
        assert status == 200
        assert connection.sock is first
        connection.close()
    _no_tracebacks(caplog)
