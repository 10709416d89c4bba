"""Issue 21 item 7: a new project gets the default rules (log channel) unless it opts out,
from the CLI and from the API; `auditor alerts defaults --help` lists every default rule."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.alerting import default_rules
from auditor.cli import app
from auditor.config import get_settings
from auditor.services.alerts.rules import install_default_rules, list_rules
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork


@pytest.fixture
def cli(monkeypatch) -> Iterator[Callable[..., Any]]:
    runner = CliRunner()

    def run(url: str, *args: str):
        monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
        get_settings.cache_clear()
        return runner.invoke(app, list(args))

    yield run
    get_settings.cache_clear()


def _rules(url: str, slug: str) -> list[tuple[str, tuple[str, ...]]]:
    engine = make_engine(url)
    try:
        return [(r.id, r.channels) for r in list_rules(UnitOfWork(engine), slug)]
    finally:
        engine.dispose()


def test_cli_project_create_installs_the_defaults_unless_told_not_to(cli, database_url) -> None:
    made = cli(database_url, "project", "create", "watched", "-c", "a,b")
    assert made.exit_code == 0, made.stderr
    assert "auditor alerts channel add watched" in made.stdout  # how to add a webhook
    wanted = [r.id for r in default_rules("watched")]
    assert _rules(database_url, "watched") == sorted((i, ("log",)) for i in wanted)
    bare = cli(database_url, "project", "create", "bare", "-c", "a,b", "--no-default-rules")
    assert bare.exit_code == 0, bare.stderr
    assert _rules(database_url, "bare") == []
    # a webhook or e-mail channel given to the defaults later joins the log channel
    assert (
        cli(database_url, "alerts", "channel", "add", "watched", "ops", "--kind", "log").exit_code
        == 0
    )
    engine = make_engine(database_url)
    try:
        assert install_default_rules(UnitOfWork(engine), "watched", ["ops"]) == []
    finally:
        engine.dispose()
    assert all(channels == ("log", "ops") for _, channels in _rules(database_url, "watched"))


def test_defaults_help_lists_every_default_rule(cli, database_url) -> None:
    shown = cli(database_url, "alerts", "defaults", "--help")
    assert shown.exit_code == 0
    text = " ".join(shown.stdout.split())
    for rule in default_rules("x", label_studio=True):
        assert f"* {rule.id.rsplit(':', 1)[-1]}:" in text


def test_project_page_says_how_to_add_a_webhook_or_email_channel(database_url) -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from auditor.config import Settings
    from auditor.services.alerts.rules import add_default_alerts
    from auditor.services.projects.projects import create_project
    from auditor.web import install_dashboard

    engine = make_engine(database_url)
    try:
        create_project(UnitOfWork(engine), "paged", ["a", "b"], then=add_default_alerts)
    finally:
        engine.dispose()
    app = FastAPI()
    app.state.settings = Settings(database_url=database_url)  # type: ignore[call-arg]
    install_dashboard(app, token="")
    with TestClient(app, client=("127.0.0.1", 41000), follow_redirects=False) as client:
        page = client.get("/projects/paged")
    assert page.status_code == 200, page.text
    assert "auditor alerts channel add paged hook --kind webhook" in page.text
    assert "--kind email" in page.text
