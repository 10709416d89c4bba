"""A database behind the code (migrated to 0010 while the code needs 0011) is named in one
line with the way out (`auditor db upgrade`): every database command and `auditor serve`
exit 1 before a query fails on a missing column, and the server, a Celery worker and beat
refuse to start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from auditor.config import Settings
from auditor.server import build_app
from auditor.storage import migrate, revision

REPO = Path(__file__).resolve().parents[2]
BEHIND = "0010"


def _auditor(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from auditor.cli import main; sys.argv[0] = 'auditor'; main()"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "AUDITOR_DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_the_code_revision_is_alembic_head() -> None:
    assert revision.code_revision() == migrate.head()
    assert revision.code_revision() != BEHIND  # else this file tests nothing


@pytest.mark.parametrize("command", [("project", "list"), ("serve", "--port", "9")])
def test_a_command_on_an_old_schema_says_upgrade(
    scratch_database_url: str, command: tuple[str, ...]
) -> None:
    migrate.upgrade(scratch_database_url, BEHIND)
    result = _auditor(scratch_database_url, *command)
    expected = (
        f"error: the database is at revision {BEHIND}, this code needs {migrate.head()}: "
        "run `auditor db upgrade`\n"
    )
    assert (result.returncode, result.stderr) == (1, expected)
    assert "serving" not in result.stdout


def test_the_server_refuses_to_start_on_an_old_schema(scratch_database_url: str) -> None:
    migrate.upgrade(scratch_database_url, BEHIND)
    with pytest.raises(SystemExit, match=r"at revision 0010, this code needs .*auditor db upgrade"):
        build_app(Settings(database_url=scratch_database_url, broker_url="redis://unused"))


def test_after_the_upgrade_the_command_runs(scratch_database_url: str) -> None:
    migrate.upgrade(scratch_database_url, BEHIND)
    assert _auditor(scratch_database_url, "project", "list").returncode == 1
    migrate.upgrade(scratch_database_url)
    result = _auditor(scratch_database_url, "project", "list")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("service", ["worker", "beat"])
def test_a_celery_worker_or_beat_on_an_old_schema_refuses_to_start(
    scratch_database_url: str, service: str, tmp_path: Path
) -> None:
    migrate.upgrade(scratch_database_url, BEHIND)
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "AUDITOR_DATABASE_URL": scratch_database_url,
        # never reached: the check runs before the worker or beat connects to its broker
        "AUDITOR_BROKER_URL": "redis://127.0.0.1:1/0",
    }
    options = {"worker": ["--concurrency", "1"], "beat": ["--schedule", str(tmp_path / "s")]}
    result = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "workers", service, *options[service]],
        capture_output=True, text=True, timeout=60, env=env, cwd=REPO,
    )  # fmt: skip
    expected = (
        f"error: the database is at revision {BEHIND}, this code needs {migrate.head()}: "
        "run `auditor db upgrade`"
    )
    assert result.returncode == 1, result.stderr
    # one line (beat's stderr goes through Celery's logger, which prefixes it)
    (line,) = [line for line in result.stderr.splitlines() if "error:" in line]
    assert line.endswith(expected), result.stderr
