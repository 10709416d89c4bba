"""``auditor alerts history`` and ``GET .../alerts/history/evaluations`` answer "what
happened": transitions by default (not the evaluations that confirmed a state again), and the
same filters on both (state, rule, subject, since, all), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from auditor.api import create_app
from auditor.cli import app
from auditor.config import Settings, get_settings
from auditor.services.access.keys import create_key
from tests.integration.alerts.support import (
    T0,
    ingest,
    kappa_rule,
    labels,
    log_channel,
    recompute,
)

HOUR = timedelta(hours=1)


@pytest.fixture
def story(uow, project: int) -> list[str]:
    """One episode of rule ``kappa`` on the project: ok, firing, a repeat, resolved, with
    evaluations in between that change nothing. Returns the expected changes, newest first."""
    log_channel(uow)
    kappa_rule(uow, repeat_interval=HOUR)
    kappa_rule(uow, name="never", threshold=-2.0)  # always ok: only its first move counts
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)  # insufficient_data -> ok
    recompute(uow, project, T0 + 2 * HOUR)  # ok again
    ingest(uow, "p", labels(90, T0 + 2 * HOUR, agreement=0.0, prefix="b"))
    recompute(uow, project, T0 + 3 * HOUR)  # ok -> firing
    recompute(uow, project, T0 + 3.5 * HOUR)  # firing, no notice yet
    recompute(uow, project, T0 + 4.5 * HOUR)  # firing, a repeat
    ingest(uow, "p", labels(900, T0 + 5 * HOUR, agreement=1.0, prefix="r"))
    recompute(uow, project, T0 + 6 * HOUR)  # firing -> ok
    recompute(uow, project, T0 + 7 * HOUR)  # ok again
    return ["resolved", "repeat", "firing", "ok"]


@pytest.fixture
def cli(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()


def _changes(runner: CliRunner, *options: str) -> list[tuple[str, str]]:
    result = runner.invoke(app, ["alerts", "history", "p", *options])
    assert result.exit_code == 0, result.output
    return [(line.split()[2], line.split()[3]) for line in result.stdout.splitlines()]


def test_cli_lists_transitions_and_filters(cli: CliRunner, story: list[str]) -> None:
    kappa = [c for c, rule in _changes(cli, "--rule", "kappa") if rule == "p:kappa"]
    assert [c.lower() for c in kappa] == story
    everything = _changes(cli)
    assert ("OK", "p:never") in everything and len(everything) == len(story) + 1
    assert [c for c, _ in _changes(cli, "--state", "resolved")] == ["RESOLVED"]
    assert [c for c, _ in _changes(cli, "--state", "repeat")] == ["REPEAT"]
    assert [c for c, _ in _changes(cli, "--state", "firing")] == ["FIRING"]
    since = (T0 + 4 * HOUR).isoformat()
    assert [c for c, _ in _changes(cli, "--since", since)] == ["RESOLVED", "REPEAT"]
    assert _changes(cli, "--subject", "rater:a") == []
    assert len(_changes(cli, "--subject", "project")) == len(everything)
    every = _changes(cli, "--all", "--rule", "kappa")
    assert len(every) == 7 and [c for c, _ in every].count("-") == 3
    firing_rows = _changes(cli, "--all", "--rule", "kappa", "--state", "firing")
    assert [c for c, _ in firing_rows] == ["REPEAT", "-", "FIRING"]
    bad = cli.invoke(app, ["alerts", "history", "p", "--state", "burning"])
    assert bad.exit_code == 1 and "state must be one of" in bad.stderr


def test_cli_says_when_the_limit_cuts_the_list(cli: CliRunner, story: list[str]) -> None:
    cut = cli.invoke(app, ["alerts", "history", "p", "--limit", "2"])
    assert cut.exit_code == 0, cut.output
    assert len(cut.stdout.splitlines()) == 2
    # five transitions in all (four of kappa, one of never): three left out, said in one line
    assert cut.stderr.strip() == "3 more; use --limit or --since/--state filters"
    whole = cli.invoke(app, ["alerts", "history", "p", "--limit", str(len(story) + 1)])
    assert len(whole.stdout.splitlines()) == len(story) + 1 and "more" not in whole.stderr


def test_api_takes_the_same_filters(database_url: str, uow, story: list[str]) -> None:
    _, secret = create_key(uow, "p", "read")
    settings = Settings(database_url=database_url)
    with TestClient(create_app(settings)) as client:

        def changes(**params: object) -> list[str]:
            response = client.get(
                "/api/v1/projects/p/alerts/history/evaluations",
                params=params,
                headers={"Authorization": f"Bearer {secret}"},
            )
            assert response.status_code == 200, response.text
            return [row["change"] for row in response.json()["evaluations"]]

        assert changes(rule="kappa") == story
        assert changes(state="resolved") == ["resolved"]
        assert changes(rule="kappa", since=(T0 + 4 * HOUR).isoformat()) == story[:2]
        assert changes(subject="rater:a") == []
        assert changes(rule="kappa", all="true").count("") == 3
        assert changes(rule="kappa", all="true", limit=2) == ["", "resolved"]
        page = client.get(
            "/api/v1/projects/p/alerts/history/evaluations",
            params={"rule": "kappa", "all": "true", "limit": 2},
            headers={"Authorization": f"Bearer {secret}"},
        ).json()
        assert page["truncated"] is True and page["more"] == 5  # seven evaluations of kappa
        full = client.get(
            "/api/v1/projects/p/alerts/history/evaluations",
            params={"rule": "kappa", "limit": len(story)},
            headers={"Authorization": f"Bearer {secret}"},
        ).json()
        assert full["truncated"] is False and full["more"] == 0
        bad = client.get(
            "/api/v1/projects/p/alerts/history/evaluations?state=burning",
            headers={"Authorization": f"Bearer {secret}"},
        )
        assert bad.status_code == 422
