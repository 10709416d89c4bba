"""One run of the whole pinned demo (24 simulated days, seed 7) per test session, shared by
the tests that only read it (issue 23: the whole-demo tests were 30-56 s each).

Under pytest-xdist every worker is a process of its own, so a session fixture alone would run
the demo once per worker: the first worker to ask runs it under a file lock in the directory
the workers share, the others wait for it and read its output and database.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app

# The end pinned: by default the story ends at the current hour, which may turn between runs.
END = "2024-03-28T00:00Z"
PINNED = ["--seed", "7", "--ends-at", END]


@dataclass(frozen=True)
class DemoRun:
    """What ``auditor demo`` printed and the database it wrote (read it, never write it)."""

    stdout: str
    database: Path


def run_demo_cli(database: Path, arguments: list[str]) -> str:
    """``auditor demo ARGUMENTS --database sqlite:///DATABASE`` in this process: its stdout."""
    result = CliRunner().invoke(app, ["demo", *arguments, "--database", f"sqlite:///{database}"])
    assert result.exit_code == 0, result.output
    return result.stdout


def shared_directory(factory: pytest.TempPathFactory) -> Path:
    """A directory every worker of this session sees (the workers' temp roots' parent)."""
    root = factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def shared_demo(root: Path) -> DemoRun:
    """The pinned demo, run once under ``root / "demo"`` by whichever worker asks first."""
    where = root / "demo"
    where.mkdir(exist_ok=True)
    printed = where / "stdout.txt"
    with (where / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not printed.exists():  # a failed run leaves nothing: the next asker runs it again
            stdout = run_demo_cli(where / "demo.db", PINNED)
            (where / "stdout.part").write_text(stdout)
            (where / "stdout.part").rename(printed)
    return DemoRun(printed.read_text(), where / "demo.db")
