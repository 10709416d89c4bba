"""A command that reads a database it cannot find names what it tried (URL with the password
masked, the file path), says how to get out (``auditor db upgrade`` or AUDITOR_DATABASE_URL),
exits 2 and creates nothing. Empty states say how to get the first snapshot."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.conftest import postgres_database
from tests.services import require_postgres

REPO = Path(__file__).resolve().parents[2]
READING_COMMANDS = [
    ("project", "list"),
    ("history", "demo", "--metric", "kappa_s"),
    ("snapshot", "demo"),
    ("alerts", "history", "demo"),
    ("alerts", "status", "demo"),
    ("keys", "list", "demo"),
    ("report", "demo", "--out", "report.html"),
    ("recompute", "demo"),
    ("run", "--once"),
    ("serve", "--port", "9"),
]


def _auditor(cwd: Path, *args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
    # The console entry point in a real process, from another directory, with or without
    # AUDITOR_DATABASE_URL: the situation of a user who forgot the export.
    code = "import sys; from auditor.cli import main; sys.argv[0] = 'auditor'; main()"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    if url is not None:
        env["AUDITOR_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd,
    )


@pytest.mark.parametrize("command", READING_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_no_file_is_named_and_never_created(tmp_path: Path, command: tuple[str, ...]) -> None:
    result = _auditor(tmp_path, *command)
    assert result.returncode == 2, result.stderr
    message = result.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert "sqlite:///auditor.db" in message
    assert str(tmp_path / "auditor.db") in message
    assert "AUDITOR_DATABASE_URL is unset" in message
    assert "auditor db upgrade" in message and "set AUDITOR_DATABASE_URL" in message
    assert list(tmp_path.iterdir()) == [], "a read created a file"


def test_db_check_names_a_missing_file_and_creates_none(tmp_path: Path) -> None:
    result = _auditor(tmp_path, "db", "check")
    assert result.returncode == 1, result.stderr
    assert str(tmp_path / "auditor.db") in result.stderr and "auditor db upgrade" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_file_without_schema_is_named_and_left_alone(tmp_path: Path) -> None:
    stray = tmp_path / "stray.db"
    stray.touch()
    result = _auditor(tmp_path, "snapshot", "demo", url="sqlite:///stray.db")
    assert result.returncode == 2, result.stderr
    assert f"sqlite:///stray.db, file {stray}" in result.stderr
    assert "from AUDITOR_DATABASE_URL" in result.stderr and "no auditor schema" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stray.db"]
    assert stray.stat().st_size == 0


def test_help_and_database_free_commands_need_no_database(tmp_path: Path) -> None:
    for command in (("history", "--help"), ("alerts", "--help"), ("version",), ("db", "--help")):
        result = _auditor(tmp_path, *command)
        assert result.returncode == 0, (command, result.stderr)
    bare_group = _auditor(tmp_path, "alerts")  # prints the group's usage (click exits 2 there)
    assert "Usage" in bare_group.stdout and "no auditor database" not in bare_group.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.postgres
def test_postgres_without_schema_masks_the_password(tmp_path: Path) -> None:
    require_postgres()
    with postgres_database() as url:
        with_password = make_url(url).set(password="s3cret-pw").render_as_string(False)
        result = _auditor(tmp_path, "project", "list", url=with_password)
    assert result.returncode == 2, result.stderr
    assert "s3cret-pw" not in result.stderr and ":***@" in result.stderr
    assert "no auditor schema" in result.stderr and "auditor db upgrade" in result.stderr


@pytest.mark.postgres
@pytest.mark.parametrize("command", [("project", "list"), ("db", "upgrade")], ids=" ".join)
def test_postgres_database_that_does_not_exist_is_named(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    require_postgres()
    with postgres_database() as url:
        missing = make_url(url).set(database=f"nosuch_{os.getpid()}", password="s3cret-pw")
        result = _auditor(tmp_path, *command, url=missing.render_as_string(False))
    assert result.returncode == 2, result.stderr
    message = result.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert "s3cret-pw" not in message
    assert missing.render_as_string(True) in message  # the URL, password masked
    assert f"createdb -h {missing.host}" in message and f"nosuch_{os.getpid()}`" in message
    assert "auditor db upgrade" in message and "set AUDITOR_DATABASE_URL" in message


def test_server_that_is_down_is_named_with_the_url(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql+psycopg://postgres:s3cret-pw@127.0.0.1:{port}/auditor"
    result = _auditor(tmp_path, "project", "list", url=url)
    assert result.returncode == 1, result.stderr
    message = result.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert f"postgresql+psycopg://postgres:***@127.0.0.1:{port}/auditor" in message
    assert "s3cret-pw" not in message and "set AUDITOR_DATABASE_URL" in message


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[CliRunner, str]]:
    url = f"sqlite:///{tmp_path / 'empty-states.db'}"
    migrate.upgrade(url)
    monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
    get_settings.cache_clear()
    yield CliRunner(), url
    get_settings.cache_clear()


def test_empty_states_say_how_to_get_a_snapshot(cli: tuple[CliRunner, str]) -> None:
    runner, url = cli
    engine = make_engine(url)
    create_project(UnitOfWork(engine), "p", ["a", "b"])

    no_labels = runner.invoke(app, ["snapshot", "p"])
    assert no_labels.exit_code == 1
    assert "no labels yet" in no_labels.stderr and "auditor import p FILE" in no_labels.stderr
    history = runner.invoke(app, ["history", "p", "--metric", "kappa_s"])
    assert history.exit_code == 0 and "auditor import p FILE" in history.stderr

    rows = [{"item": f"i{i}", "rater": r, "label": "ab"[i % 2]} for i in range(6) for r in "xy"]
    ingest_labels(UnitOfWork(engine), "p", rows)
    waiting = runner.invoke(app, ["snapshot", "p", "--scope", "7d"])
    assert waiting.exit_code == 1
    assert "12 labels but no 7d snapshot yet" in waiting.stderr
    assert "auditor recompute p" in waiting.stderr and "every 60 s" in waiting.stderr
    as_json = runner.invoke(app, ["history", "p", "--metric", "kappa_s", "--format", "json"])
    assert as_json.stdout.strip() == "[]" and "auditor recompute p" in as_json.stderr

    recompute_project(UnitOfWork(engine), find_project_id(UnitOfWork(engine), "p"))
    engine.dispose()
    done = runner.invoke(app, ["history", "p", "--metric", "kappa_s"])
    assert done.exit_code == 0 and done.stderr == "" and "cumulative" in done.stdout
    assert runner.invoke(app, ["snapshot", "p"]).exit_code == 0
    assert os.path.exists(make_url(url).database or "")
