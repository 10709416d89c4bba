"""Issue 11 item 5: on SQLite a file import holds the write lock for its write only (parse and
validation come first), and an API write that cannot get the lock is 503 with Retry-After."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from auditor.api import create_app
from auditor.config import Settings
from auditor.ingestion.batch import RawBatch
from auditor.services.access.keys import create_key
from auditor.services.ingest.labels import ImportResult, import_batches, ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage import db as storage_db
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork


@pytest.fixture
def sqlite_url(migrated_sqlite_template: Path, tmp_path: Path, monkeypatch) -> Iterator[str]:
    target = tmp_path / "auditor.db"
    shutil.copyfile(migrated_sqlite_template, target)
    # A short busy timeout, so "cannot get the lock" takes a moment, not 30 s.
    monkeypatch.setattr(storage_db, "SQLITE_BUSY_TIMEOUT_MS", 300)
    yield f"sqlite:///{target}"


def _batches(n: int, size: int = 50) -> Iterator[RawBatch]:
    for b in range(n):
        rows = [{"item": f"i{b}-{k}", "rater": f"r{k % 3}", "label": "yes"} for k in range(size)]
        yield RawBatch.from_records(rows)


def test_writes_go_through_while_an_import_parses(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    uow = UnitOfWork(engine)
    create_project(uow, "p", ["yes", "no"])
    other = UnitOfWork(make_engine(sqlite_url))
    written_meanwhile: list[int] = []

    def on_batch(_: ImportResult) -> None:
        # Runs while the file is being parsed: an API write must get the lock now.
        result = ingest_labels(other, "p", [{"item": "api", "rater": f"x{len(written_meanwhile)}",
                                             "label": "no"}])  # fmt: skip
        written_meanwhile.append(result.inserted)

    result = import_batches(uow, "p", _batches(5), on_batch=on_batch)
    assert not result.rejected and result.inserted == 250
    assert written_meanwhile == [1] * 5
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM labels")).scalar_one() == 255
    engine.dispose()


def test_api_write_without_the_lock_is_503_with_retry_after(sqlite_url: str) -> None:
    uow = UnitOfWork(make_engine(sqlite_url))
    create_project(uow, "p", ["yes", "no"])
    _, secret = create_key(uow, "p", "ingest")
    app = create_app(Settings(database_url=sqlite_url))
    holder = make_engine(sqlite_url).connect().execution_options(sqlite_begin="IMMEDIATE")
    body = {"labels": [{"item": "i", "rater": "r", "label": "yes"}]}
    headers = {"Authorization": f"Bearer {secret}"}
    with TestClient(app, raise_server_exceptions=False) as client:
        holder.exec_driver_sql("SELECT 1")  # BEGIN IMMEDIATE: what a long import's write holds
        try:
            busy = client.post("/api/v1/projects/p/labels", json=body, headers=headers)
        finally:
            holder.rollback()
            holder.close()
        assert busy.status_code == 503, busy.text
        assert busy.headers["Retry-After"] == "5"
        assert busy.json()["error"]["code"] == "database_busy"
        done = client.post("/api/v1/projects/p/labels", json=body, headers=headers)
        assert done.status_code in (200, 201), done.text
