"""Every process that can run a recompute also evaluates alert rules.

Rule evaluation is installed as a side effect of importing ``auditor.services.alerts``. This
test process imports it (tests/integration/alerts/support.py), so only fresh interpreters can
show an entry point that forgets to: a recompute there would write snapshots and silently
judge no rule.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.services.alert_admin import evaluation_history
from tests.integration.alerts.support import ingest, kappa_rule, labels

ROOT = Path(__file__).resolve().parents[3]
AUDITOR = Path(sys.executable).parent / "auditor"

# Where a recompute can start: the CLI commands recompute, run and demo (auditor.cli imports
# a command's module when it runs); the embedded loop of `auditor serve` (auditor.server
# starts it from auditor.services.recompute.embedded); the Celery worker (`celery -A workers`
# imports the package, whose tasks call recompute_project). Not
# auditor.services.demo.simulation: a library, run with or without alerts by its callers.
ENTRY_MODULES = [
    "auditor.cli.recompute",
    "auditor.cli.demo",
    "auditor.services.recompute.embedded",
    "auditor.server",
    "workers",
    "workers.tasks",
]


def _run(args: list[str], database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUDITOR_DATABASE_URL": database_url}
    env.pop("AUDITOR_BROKER_URL", None)
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("module", ENTRY_MODULES)
def test_importing_an_entry_point_installs_rule_evaluation(module: str) -> None:
    code = (
        f"import {module}\n"
        "from auditor.services.recompute import recompute as audit\n"
        "print(sorted({h.__module__ for h in audit._snapshot_hooks}))\n"
    )
    done = _run([sys.executable, "-c", code], "sqlite://")
    assert done.returncode == 0, done.stderr
    assert "auditor.services.alerts" in done.stdout, f"{module} does not install the hook"


@pytest.mark.parametrize("command", [["recompute", "p", "--force"], ["run", "--once"]])
def test_a_recompute_in_a_fresh_cli_process_evaluates_rules(
    command: list[str], database_url: str, uow, project
) -> None:
    kappa_rule(uow, channels=())
    # labeled just now: `auditor run` judges the windows on the wall clock
    start = datetime.now(UTC) - timedelta(hours=1)
    ingest(uow, "p", labels(30, start, agreement=1.0, prefix="g"))
    assert evaluation_history(uow, "p") == []
    done = _run([str(AUDITOR), *command], database_url)
    assert done.returncode == 0, done.stderr
    history = evaluation_history(uow, "p")
    assert history, f"`auditor {' '.join(command)}` wrote snapshots but judged no rule"
    assert {row["rule_id"] for row in history} == {"p:kappa"}
