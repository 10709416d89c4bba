"""An API app on the parametrized database (SQLite and PostgreSQL), with two projects.

Project "alpha" is the caller's; project "beta" is another team's, with ids of its own
(rater "b-rater", item "b-item", a snapshot, alert rule "beta:b-rule", channel "b-log", a
silence) that alpha's keys must never reach. Alpha has its own rule "a-rule", channel
"a-log" and a silence.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from auditor.api import create_app
from auditor.config import Settings
from auditor.services.access.keys import create_key
from auditor.services.alert_admin import ChannelSpec, RuleSpec, add_channel, add_rule, add_silence
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage.unit_of_work import UnitOfWork

OPERATOR_TOKEN = "operator-token-for-tests"
CATEGORIES = ["normal", "benign", "malignant"]
T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)


def label_rows(prefix: str, raters: list[str], n_items: int, start: datetime = T0) -> list[dict]:
    """Every rater labels every item; rater i disagrees on items where (item + i) % 4 == 0,
    and the first rater sees the first items twice (self-agreement needs repeats)."""
    rows = []
    for item in range(n_items):
        for position, rater in enumerate(raters):
            category = CATEGORIES[item % 3]
            if (item + position) % 4 == 0:
                category = CATEGORIES[(item + 1) % 3]
            at = start + timedelta(minutes=item)
            rows.append(
                {
                    "item": f"{prefix}-item-{item}",
                    "rater": rater,
                    "label": category,
                    "session": f"{rater}-s1",
                    "labeled_at": at.isoformat(),
                }
            )
    for item in range(min(6, n_items)):
        rows.append(
            {
                "item": f"{prefix}-item-{item}",
                "rater": raters[0],
                "label": CATEGORIES[item % 3],
                "session": f"{raters[0]}-s2",
                "labeled_at": (start + timedelta(days=1, minutes=item)).isoformat(),
            }
        )
    return rows


@dataclass
class World:
    client: TestClient
    engine_url: str
    keys: dict[tuple[str, str], str]  # (project, role) -> secret
    beta_snapshot_id: int
    alpha_snapshot_id: int
    alpha_silence_id: int
    beta_silence_id: int
    beta_import_id: int = 0

    def auth(self, project: str = "alpha", role: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[(project, role)]}"}

    def opaque(self, kind: str, project: str, value: int) -> int:
        """The id ``project``'s keys see for global id ``value``
        (auditor.services.access.public_ids)."""
        from auditor.services.access.public_ids import load_public_ids
        from auditor.storage.db import make_engine

        engine = make_engine(self.engine_url)
        try:
            project_id = find_project_id(UnitOfWork(engine), project)
            return load_public_ids(UnitOfWork(engine)).encode(kind, project_id, value)
        finally:
            engine.dispose()


def seed_alerts(engine, slug: str, prefix: str) -> int:
    """A log channel, a rule using it and a silence of that rule; returns the silence id."""
    add_channel(UnitOfWork(engine), slug, ChannelSpec(f"{prefix}-log", "log"))
    spec = RuleSpec(
        "kappa_s", "below", threshold=0.5, name=f"{prefix}-rule", channels=(f"{prefix}-log",)
    )
    rule = add_rule(UnitOfWork(engine), slug, spec)
    ends = datetime.now(UTC) + timedelta(days=30)
    return add_silence(UnitOfWork(engine), slug, ends_at=ends, rule_id=rule.id, reason="seed").id


def seed(url: str) -> tuple[dict[tuple[str, str], str], dict[str, int]]:
    from auditor.storage.db import make_engine

    engine = make_engine(url)
    try:
        keys = {}
        snapshots = {}
        for slug, raters in (("alpha", ["a1", "a2", "a3"]), ("beta", ["b-rater", "b2", "b3"])):
            create_project(UnitOfWork(engine), slug, CATEGORIES)
            prefix = "b" if slug == "beta" else "a"
            first = ingest_labels(UnitOfWork(engine), slug, label_rows(prefix, raters, 12))
            snapshots[f"import:{slug}"] = first.import_id or 0
            if slug == "beta":
                ingest_labels(
                    UnitOfWork(engine), slug, [{"item": "b-item", "rater": "b2", "label": "normal"}]
                )
            for role in ("ingest", "read", "admin"):
                keys[(slug, role)] = create_key(UnitOfWork(engine), slug, role)[1]
            project_id = find_project_id(UnitOfWork(engine), slug)
            result = recompute_project(UnitOfWork(engine), project_id, now=T0 + timedelta(days=2))
            snapshots[slug] = result.written[0].id
            snapshots[f"silence:{slug}"] = seed_alerts(engine, slug, prefix)
        return keys, snapshots
    finally:
        engine.dispose()


def make_settings(url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": url,
        "admin_token": OPERATOR_TOKEN,
        "broker_url": None,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def world(database_url: str) -> Iterator[World]:
    keys, snapshots = seed(database_url)
    app = create_app(make_settings(database_url))
    # A loopback peer, as a client on this machine (the tokenless /metrics answers only those).
    with TestClient(app, raise_server_exceptions=False, client=("127.0.0.1", 50000)) as client:
        yield World(
            client,
            database_url,
            keys,
            snapshots["beta"],
            snapshots["alpha"],
            snapshots["silence:alpha"],
            snapshots["silence:beta"],
            snapshots["import:beta"],
        )


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(database_url: str, **env_extra: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``auditor serve`` on a free loopback port; yields (base URL, process)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
    env |= {"AUDITOR_DATABASE_URL": database_url, **env_extra}
    # Output to a file, not a pipe: nobody reads a pipe while tests run, and a full pipe
    # would block the server on its access log.
    log = tempfile.NamedTemporaryFile("w+", prefix="auditor-serve-", suffix=".log")  # noqa: SIM115
    command = [sys.executable, "-c", "from auditor.cli import main; main()", "serve"]
    process = subprocess.Popen(
        [*command, "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT, text=True
    )
    process.log_path = log.name  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {Path(log.name).read_text()}")
            time.sleep(0.1)
        yield base, process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
