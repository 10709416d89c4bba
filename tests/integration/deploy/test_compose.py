"""The compose deployment, checked without a Docker engine: ``docker-compose config`` accepts
the file, the services and their ordering are the intended topology, and every command it
runs is a real command of ours (its options included)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.services import IN_CI

REPO = Path(__file__).resolve().parents[3]
COMPOSE = REPO / "docker-compose.yml"
BIN = Path(sys.executable).parent
AUDITOR_SERVICES = ("migrate", "api", "worker", "beat")


def _compose_config(**extra: str) -> subprocess.CompletedProcess:
    tool = shutil.which("docker-compose")
    if tool is None:
        message = "docker-compose is not installed (apt-get install docker-compose)"
        if IN_CI:
            pytest.fail(f"{message}; CI requires it", pytrace=False)
        pytest.skip(message)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUDITOR_", "POSTGRES_"))}
    return subprocess.run(
        [tool, "-f", str(COMPOSE), "config"],
        cwd=REPO, env={**env, **extra}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.fixture(scope="module")
def config() -> dict:
    result = _compose_config(AUDITOR_METRICS_TOKEN="scrape-token", POSTGRES_PASSWORD="pw")
    assert result.returncode == 0, f"docker-compose config failed:\n{result.stderr}"
    return yaml.safe_load(result.stdout)


def test_the_metrics_token_is_required_and_ports_are_on_loopback(config: dict) -> None:
    missing = _compose_config(POSTGRES_PASSWORD="pw")
    assert missing.returncode != 0
    assert "AUDITOR_METRICS_TOKEN" in missing.stdout + missing.stderr
    assert config["services"]["api"]["environment"]["AUDITOR_METRICS_TOKEN"] == "scrape-token"
    for name, service in config["services"].items():
        for port in map(_port, service.get("ports", [])):
            assert port["host_ip"] == "127.0.0.1", (name, port)


def test_the_database_password_is_required_not_defaulted(config: dict) -> None:
    """issue 27: no silent fallback to a well-known password."""
    missing = _compose_config(AUDITOR_METRICS_TOKEN="scrape-token")
    assert missing.returncode != 0
    assert "POSTGRES_PASSWORD" in missing.stdout + missing.stderr
    assert config["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == "pw"
    assert ":pw@postgres:5432/" in config["services"]["api"]["environment"]["AUDITOR_DATABASE_URL"]


def _port(entry: dict | str) -> dict:
    """A published port in the long form, whichever form this docker-compose renders."""
    if isinstance(entry, dict):
        return entry
    host_ip, published, target = entry.split("/")[0].rsplit(":", 2)
    return {"host_ip": host_ip, "published": published, "target": int(target)}


def test_services_and_volumes(config: dict) -> None:
    assert set(config["services"]) == {"postgres", "redis", *AUDITOR_SERVICES}
    postgres = config["services"]["postgres"]
    assert any(v["target"] == "/var/lib/postgresql/data" for v in _volumes(postgres))
    assert "pgdata" in config["volumes"]


def _volumes(service: dict) -> list[dict]:
    return [v if isinstance(v, dict) else {"target": v.split(":")[1]} for v in service["volumes"]]


def test_health_checks_and_start_order(config: dict) -> None:
    services = config["services"]
    for name in ("postgres", "redis", "api", "worker"):
        assert services[name].get("healthcheck", {}).get("test"), f"{name} has no health check"
    assert "/healthz" in " ".join(services["api"]["healthcheck"]["test"])
    # The schema is migrated once, after PostgreSQL is healthy, before anything uses it.
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["migrate"]["restart"] == "no"
    for name in ("api", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["migrate"] == {"condition": "service_completed_successfully"}, name
        assert depends["redis"] == {"condition": "service_healthy"}, name


def test_environment_configures_the_distributed_mode(config: dict) -> None:
    for name in AUDITOR_SERVICES:
        env = config["services"][name]["environment"]
        assert env["AUDITOR_DATABASE_URL"].startswith("postgresql+psycopg://"), name
        assert "@postgres:5432/" in env["AUDITOR_DATABASE_URL"], name
        assert env["AUDITOR_BROKER_URL"].startswith("redis://redis:6379/"), name
        assert float(env["AUDITOR_SCAN_INTERVAL_SECONDS"]) > 0
    assert "AUDITOR_DASHBOARD_TOKEN" in config["services"]["api"]["environment"]
    assert _port(config["services"]["api"]["ports"][0])["target"] == 8000


def _commands(config: dict) -> list[tuple[str, list[str]]]:
    found = []
    for name in AUDITOR_SERVICES:
        command = config["services"][name]["command"]
        found.append((name, command if isinstance(command, list) else command.split()))
    return found


@pytest.mark.parametrize("service", AUDITOR_SERVICES)
def test_every_command_is_a_real_command_of_ours(config: dict, service: str) -> None:
    """Run the command with --help appended: click parses every option given before the
    help flag, so a renamed command or option fails here, not at deploy time."""
    command = dict(_commands(config))[service]
    program = command[0]
    assert program in ("auditor", "celery"), f"{service} runs {program!r}"
    env = {**os.environ, "AUDITOR_BROKER_URL": "redis://127.0.0.1:6379/15"}
    result = subprocess.run(
        [str(BIN / program), *command[1:], "--help"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, f"{service}: {' '.join(command)}\n{result.stderr}"
    assert "Usage" in result.stdout
    if program == "celery":
        assert command[1:3] == ["-A", "workers"], "the Celery app is the workers package"


def test_the_image_holds_what_the_commands_need() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    for path in ("auditor", "workers", "migrations", "pyproject.toml", "README.md"):
        assert path in dockerfile, f"the image does not copy {path}"
        assert (REPO / path).exists()
    ignored = (REPO / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored
