"""``auditor --url URL --key KEY <read command>`` prints what the local command prints on the
server's database: history (table, CSV, JSON), snapshot, imports, alert states and history.
Ids are the exception: remotely they are the opaque ids the API shows (and takes back)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

import httpx
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from tests.integration.client.conftest import PROJECT, client_of, judged_labels

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
NO_DATABASE = "sqlite:////nonexistent/auditor.db"  # remote commands must not open one


@pytest.fixture
def free_port() -> int:
    from tests.integration.api.conftest import free_port

    return free_port()


@pytest.fixture
def cli(served, monkeypatch) -> Iterator[tuple[Callable[..., str], Callable[..., str]]]:
    runner = CliRunner()

    def run(url: str, args: list[str], env: dict[str, str] | None = None) -> str:
        monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
        get_settings.cache_clear()
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result.stdout

    def local(*args: str) -> str:
        return run(served.database_url, list(args))

    def remote(*args: str) -> str:
        return run(NO_DATABASE, ["--url", served.base, "--key", served.keys["read"], *args])

    yield local, remote
    get_settings.cache_clear()


def _until(served) -> str:
    with client_of(served, "read") as client:  # snapshots after this one are left out
        return client.wait_for_snapshot(timeout=60).as_of.isoformat()


def test_history_in_every_format(served, cli) -> None:
    local, remote = cli
    until = _until(served)
    for metric, subject in (("kappa_s", "project"), ("s", "model:judge-v1"),
                            ("cohen_kappa", "pair:a2|a1"), ("s_vs_group", "rater:a3")):  # fmt: skip
        for output in ("json", "csv", "table"):
            args = ["history", PROJECT, "--metric", metric, "--subject", subject]
            args += ["--until", until, "--format", output]
            shown = local(*args)
            # a revert's line names its import: by its opaque id remotely
            assert re.sub(r"import \d+", "import N", remote(*args)) == re.sub(
                r"import \d+", "import N", shown
            )
    rows = json.loads(local("history", PROJECT, "--metric", "kappa_s", "--until", until,
                            "--format", "json"))  # fmt: skip
    with client_of(served, "read") as client:
        assert client.history("kappa_s", until=until).records() == rows  # the client's view
    assert len(rows) >= 6


def test_snapshot(served, cli) -> None:
    local, remote = cli
    _until(served)
    here, there = json.loads(local("snapshot", PROJECT)), json.loads(remote("snapshot", PROJECT))
    mine, theirs = here.pop("snapshot"), there.pop("snapshot")
    assert here == there
    assert theirs["watermark"] == mine["project_label_count"]  # the project's own count
    assert {k: v for k, v in mine.items() if k not in ("id", "watermark")} == {
        k: v for k, v in theirs.items() if k not in ("id", "watermark")
    }


def _without_ids(text: str) -> list[str]:
    return [line.split("\t", 1)[1] for line in text.splitlines()]


def test_imports(served, cli) -> None:
    local, remote = cli
    assert _without_ids(local("imports", "list", PROJECT)) == _without_ids(
        remote("imports", "list", PROJECT)
    )
    here = json.loads(local("imports", "list", PROJECT, "--json"))[0]
    there = json.loads(remote("imports", "list", PROJECT, "--json"))[0]
    one_here = local("imports", "show", PROJECT, str(here["id"])).splitlines()
    one_there = remote("imports", "show", PROJECT, str(there["id"])).splitlines()
    assert one_here[1:] == one_there[1:] and one_there[0] == f"id              {there['id']}"


def test_repeat_status(served, cli) -> None:
    local, remote = cli
    with client_of(served, "read") as client:
        client.plan_repeats("a2", 2, request_id="cli-status")  # something planned to show
    shown = local("repeats", "status", PROJECT)
    assert remote("repeats", "status", PROJECT) == shown and "\na2 " in shown


def test_alert_states_and_history(served, cli) -> None:
    local, remote = cli
    admin = {"Authorization": f"Bearer {served.keys['admin']}"}
    rule = {"name": "cli-low", "metric": "kappa_s", "condition": "below", "threshold": 2.0,
            "min_n": 1}  # fmt: skip
    url = f"{served.base}/api/v1/projects/{PROJECT}/alerts/rules"
    assert httpx.post(url, json=rule, headers=admin).status_code == 201
    with client_of(served, "admin") as client:  # a new snapshot evaluates the rule
        client.post_labels(judged_labels(range(960, 970), ("a3",), 8))
        client.wait_for_snapshot(timeout=60)
    assert local("alerts", "status", PROJECT) == remote("alerts", "status", PROJECT)
    args = ("alerts", "history", PROJECT, "--rule", "cli-low", "--all")
    shown = local(*args)
    assert "FIRING" in shown
    assert re.sub(r"snapshot \d+", "", remote(*args)) == re.sub(r"snapshot \d+", "", shown)
    assert local("alerts", "history", PROJECT, "--notices") == remote(
        "alerts", "history", PROJECT, "--notices"
    )


def test_the_service_from_the_environment(served, cli, monkeypatch) -> None:
    local, _ = cli
    until = _until(served)
    args = ["history", PROJECT, "--metric", "rho", "--until", until, "--format", "csv"]
    monkeypatch.setenv("AUDITOR_DATABASE_URL", NO_DATABASE)
    get_settings.cache_clear()
    env = {"AUDITOR_URL": served.base, "AUDITOR_KEY": served.keys["read"]}
    result = CliRunner().invoke(app, args, env=env)
    assert (result.exit_code, result.stdout) == (0, local(*args))


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["recompute", PROJECT], 2, "`recompute judge` works on the database only"),
        (["history", PROJECT, "--metric", "kappa_s"], 2, "needs a project key: --key KEY"),
        (["--key", "k", "history", PROJECT, "--metric", "nope"], 1, "unknown or revoked"),
    ],
)
def test_usage_and_service_errors(served, args, code, said) -> None:
    result = CliRunner().invoke(app, ["--url", served.base, *args])
    assert result.exit_code == code and said in result.stderr, result.stderr


def test_a_remote_error_is_one_line(served, cli) -> None:
    args = ["--url", served.base, "--key", served.keys["read"], "history", PROJECT]
    result = CliRunner().invoke(app, [*args, "--metric", "nope"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: project 'judge' has no 'nope' for the project")


def test_a_service_that_does_not_answer(free_port) -> None:
    url = f"http://127.0.0.1:{free_port}"
    result = CliRunner().invoke(app, ["--url", url, "--key", "k", "snapshot", PROJECT])
    assert result.exit_code == 1
    assert (
        result.stderr.startswith(f"error: {url}: ")
        and "ConnectError, 4 attempt(s)" in result.stderr
    )
