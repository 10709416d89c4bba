"""Every process that can run a recompute also evaluates alert rules.

The recompute calls rule evaluation itself (no hook to install, no import with a side
effect), so a fresh process that recomputes judges rules whatever it imported: fresh CLI
processes show it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.integration.alerts.support import evaluations, ingest, kappa_rule, labels

ROOT = Path(__file__).resolve().parents[3]
AUDITOR = Path(sys.executable).parent / "auditor"


def _run(args: list[str], database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUDITOR_DATABASE_URL": database_url}
    env.pop("AUDITOR_BROKER_URL", None)
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("command", [["recompute", "p", "--force"], ["run", "--once"]])
def test_a_recompute_in_a_fresh_cli_process_evaluates_rules(
    command: list[str], database_url: str, uow, project
) -> None:
    kappa_rule(uow, channels=())
    # labeled just now: `auditor run` judges the windows on the wall clock
    start = datetime.now(UTC) - timedelta(hours=1)
    ingest(uow, "p", labels(30, start, agreement=1.0, prefix="g"))
    assert evaluations(uow, "p") == []
    done = _run([str(AUDITOR), *command], database_url)
    assert done.returncode == 0, done.stderr
    history = evaluations(uow, "p")
    assert history, f"`auditor {' '.join(command)}` wrote snapshots but judged no rule"
    assert {row.rule_id for row in history} == {"p:kappa"}
