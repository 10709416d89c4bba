"""A real ``auditor serve`` on a PostgreSQL database of its own, with one project and a key
of each role, for the client's tests (``served_project``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from subprocess import Popen

import pytest

from auditor.client import Client
from auditor.services.access.keys import create_key
from auditor.services.projects.projects import create_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import CATEGORIES, serving
from tests.integration.conftest import postgres_database
from tests.services import require_postgres

PROJECT = "judge"
RATERS = ("a1", "a2", "a3", "judge-v1", "judge-v2")
T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)


@dataclass
class Served:
    database_url: str
    base: str
    keys: dict[str, str]  # role -> secret
    process: Popen

    def label_count(self) -> int:
        from sqlalchemy import text

        engine = make_engine(self.database_url)
        try:
            with engine.connect() as connection:
                return int(connection.execute(text("SELECT count(*) FROM labels")).scalar_one())
        finally:
            engine.dispose()


@contextmanager
def served_project(**env: str) -> Iterator[Served]:
    """A new database at the head revision, project ``judge`` and ``auditor serve`` on it."""
    require_postgres()
    with postgres_database() as url:
        migrate.upgrade(url)
        engine = make_engine(url)
        try:
            create_project(UnitOfWork(engine), PROJECT, CATEGORIES, recompute_interval_seconds=1)
            keys = {
                r: create_key(UnitOfWork(engine), PROJECT, r)[1]
                for r in ("ingest", "read", "admin")
            }
        finally:
            engine.dispose()
        with serving(url, **env) as (base, process):
            yield Served(url, base, keys, process)


def judged_labels(items: range, raters: tuple[str, ...], day: int = 0) -> list[dict]:
    """Humans and model raters labeling the same items: rater i disagrees with the truth on
    items where (item + i) % 5 == 0; models are marked ``rater_kind: model``."""
    rows = []
    for item in items:
        for position, rater in enumerate(raters):
            truth = CATEGORIES[item % 3]
            label = CATEGORIES[(item + 1) % 3] if (item + position) % 5 == 0 else truth
            rows.append(
                {
                    "item": f"case-{item}",
                    "rater": rater,
                    "label": label,
                    "session": f"{rater}-d{day}",
                    "labeled_at": (T0 + timedelta(days=day, minutes=item)).isoformat(),
                    **({"rater_kind": "model"} if rater.startswith("judge") else {}),
                }
            )
    return rows


@pytest.fixture(scope="session")
def served() -> Iterator[Served]:
    """One server for the client's tests, with a batch limit (500 labels) and a body cap
    (100 kB) below the defaults, so the client must learn both from the server's 413s, and
    three days of labels of project ``judge``, each day its own snapshot."""
    env = {
        "AUDITOR_SCAN_INTERVAL_SECONDS": "0.3",
        "AUDITOR_API_MAX_BATCH_LABELS": "500",
        "AUDITOR_API_MAX_BODY_BYTES": "100000",
    }
    with served_project(**env) as found:
        with Client(found.base, found.keys["admin"]) as client:
            for day in range(3):
                client.post_labels(judged_labels(range(40), RATERS, day), idempotency_key=f"d{day}")
                client.wait_for_snapshot(timeout=60)
        yield found


def client_of(served: Served, role: str = "admin") -> Client:
    return Client(served.base, served.keys[role])
