"""The snapshot commands end to end on the embedded default (a SQLite file)."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.snapshots.scopes import tick_start
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime.now(UTC) - timedelta(hours=1)
MICROSECOND = timedelta(microseconds=1)


def _rows(prefix: str, n: int = 12):
    return [
        {
            "item": f"{prefix}{i}",
            "rater": r,
            "label": "ab"[(i + (r == "z")) % 2],
            "labeled_at": T0 + timedelta(seconds=i),
        }
        for i in range(n)
        for r in ("x", "y", "z")
    ]


@pytest.fixture
def db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    migrate.upgrade(url)
    monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
    monkeypatch.delenv("AUDITOR_BROKER_URL", raising=False)
    get_settings.cache_clear()
    uow = UnitOfWork(make_engine(url))
    create_project(uow, "cli", ["a", "b"], recompute_interval_seconds=1)
    ingest_labels(uow, "cli", _rows("i"))
    yield uow
    get_settings.cache_clear()


def invoke(*args: str, clock=None):
    return CliRunner().invoke(app, list(args), obj=clock)


def test_recompute_history_snapshot_and_run(db):
    first = invoke("recompute", "cli")
    assert first.exit_code == 0, first.output
    assert "wrote cumulative (36 labels), 7d (36 labels)" in first.stdout

    table = invoke("history", "cli", "--metric", "kappa_s")
    assert table.exit_code == 0 and table.stdout.count("\n") == 3  # header + two scopes
    as_json = json.loads(
        invoke(
            "history", "cli", "--metric", "kappa_s", "--format", "json", "--scope", "cumulative"
        ).stdout
    )
    snap = json.loads(invoke("snapshot", "cli").stdout)
    assert as_json[0]["value"] == snap["measures"]["kappa_s"]["value"]
    assert snap["n_labels"] == 36 and snap["snapshot"]["scope"] == "cumulative"
    assert set(snap) >= {"measures", "raters", "models", "pairwise_cohen", "snapshot"}

    ingest_labels(db, "cli", _rows("j"))
    # A scan in the first snapshot's tick writes nothing; one at the start of the next tick
    # (the project's interval is 1 s) recomputes. The scans read a stepped clock, not the wall.
    next_tick = tick_start(snap["snapshot"]["tick"] + 1, 1)
    same = invoke("run", "--once", "--interval", "0.1", clock=lambda: next_tick - MICROSECOND)
    assert same.exit_code == 0, same.output
    assert "scan done: no project due for a recompute" in same.stdout, same.stdout
    assert json.loads(invoke("snapshot", "cli").stdout)["snapshot"] == snap["snapshot"]
    ran = invoke("run", "--once", "--interval", "0.1", clock=lambda: next_tick)
    assert ran.exit_code == 0, ran.output
    # issue 27: run --once says what it recomputed and wrote
    assert "scan done: 1 project recomputed" in ran.stdout, ran.stdout
    assert "recomputed cli at tick" in ran.stdout and "wrote cumulative" in ran.stdout
    rows = list(
        csv.DictReader(
            io.StringIO(
                invoke(
                    "history",
                    "cli",
                    "--metric",
                    "self_agreement",
                    "--subject",
                    "rater:x",
                    "--format",
                    "csv",
                    "--scope",
                    "cumulative",
                ).stdout
            )
        )
    )
    assert len(rows) == 2 and rows[0]["value"] == "" and rows[0]["reason"]

    old = invoke("snapshot", "cli", "--at", (T0 - timedelta(days=1)).isoformat())
    assert old.exit_code == 1 and "no cumulative snapshot at or before" in old.output

    # A scope the project does not compute is an error, not an empty table.
    nine = invoke("history", "cli", "--metric", "kappa_s", "--scope", "9d")
    assert nine.exit_code == 1 and "no scope '9d'; its scopes: 7d, cumulative" in nine.output


def test_errors_name_the_problem(db, monkeypatch):
    assert "no project 'nope'" in invoke("recompute", "nope").output
    bad_time = invoke("history", "cli", "--metric", "kappa_s", "--since", "yesterday")
    assert bad_time.exit_code == 2 and "--since: not an ISO 8601 time" in bad_time.output
    monkeypatch.setenv("AUDITOR_BROKER_URL", "redis://127.0.0.1:6379/15")
    get_settings.cache_clear()
    refused = invoke("run", "--once")
    assert refused.exit_code == 2 and "celery -A workers worker" in refused.output
