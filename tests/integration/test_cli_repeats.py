"""``auditor repeats plan|status|settings`` on a real database: a plan printed and recorded,
the same request id again, the coverage table, bad input named with exit 1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project


def test_repeats_commands(monkeypatch, uow, database_url) -> None:
    create_project(uow, "p", ["a", "b"])
    start = datetime.now(UTC) - timedelta(days=3)
    rows = [
        {"item": f"i{k}", "rater": "r1", "label": "ab"[k % 2],
         "labeled_at": start + timedelta(minutes=k)}
        for k in range(60)
    ]  # fmt: skip
    ingest_labels(uow, "p", rows)
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args))

    try:
        settings = run("repeats", "settings", "p", "--share", "0.1")
        assert settings.exit_code == 0 and "share 0.1, gap 24 h and 20 items" in settings.stdout
        plan = run("repeats", "plan", "p", "r1", "-n", "4", "--request-id", "b1", "--json")
        assert plan.exit_code == 0, plan.output
        answer = json.loads(plan.stdout)
        assert len(answer["items"]) == 4 and answer["outstanding"] == 4
        again = run("repeats", "plan", "p", "r1", "-n", "4", "--request-id", "b1", "--json")
        assert json.loads(again.stdout) == answer
        status = run("repeats", "status", "p")
        assert status.exit_code == 0
        line = next(x for x in status.stdout.splitlines() if x.startswith("r1"))
        assert line.split()[1:7] == ["4", "0", "0", "4", "0", "98"]
        assert line.endswith("<- short")
        unknown = run("repeats", "plan", "p", "nobody")
        assert unknown.exit_code == 1 and "no rater 'nobody'" in unknown.output
        bad = run("repeats", "settings", "p", "--half-width", "0.7")
        assert bad.exit_code == 1 and "half_width must be in (0, 0.5)" in bad.output
    finally:
        get_settings.cache_clear()
