"""The compose topology as native processes on loopback: PostgreSQL (a database of our own),
Redis (DB 15, a key prefix of our own), ``auditor db upgrade``, the API under uvicorn
(``auditor serve``), one Celery worker and one beat with a 1 s scan.

Labels go in over HTTP with a key from ``auditor keys create``; a snapshot appears; the
history endpoint returns it; ``/metrics`` shows its value; an alert fires to a webhook
receiver on loopback (channel marked internal); every process stops on SIGTERM within a
bounded wait with exit code 0. Tests run in file order on one running topology.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx
import psycopg
import pytest
import redis
from sqlalchemy.engine import make_url

from tests.services import POSTGRES_ADMIN_URL, require_postgres, require_redis
from tests.timing import scaled

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis]

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
REDIS_DB = 15
SLUG = "topo"
STOP_TIMEOUT = 20.0


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> object:
    """``timeout`` is for a quiet machine: stretched by the measured slowness (tests/timing.py)."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class Receiver(BaseHTTPRequestHandler):
    received: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Receiver.received.append({"headers": dict(self.headers), "body": json.loads(body)})
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Topology:
    env: dict[str, str]
    tmp: Path
    base_url: str = ""
    key: str = ""
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)

    def run(self, *args: str) -> str:
        result = subprocess.run(
            [str(BIN / "auditor"), *args], cwd=REPO, env=self.env, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, f"auditor {' '.join(args)}:\n{result.stderr}"
        return result.stdout

    def start(self, name: str, command: list[str]) -> subprocess.Popen:
        log = self.tmp / f"{name}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                command, cwd=REPO, env=self.env, stdout=sink, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.processes[name], self.logs[name] = process, log
        return process

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")

    def get(self, path: str, **params: object) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.key}"}
        return httpx.get(self.base_url + path, params=params, headers=headers, timeout=10)


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    require_postgres()
    require_redis()
    tmp = tmp_path_factory.mktemp("topology")
    database = f"auditor_t_{uuid.uuid4().hex[:8]}"
    prefix = f"auditor-topo-{uuid.uuid4().hex[:8]}:"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    Receiver.received = []
    url = make_url(POSTGRES_ADMIN_URL).set(database=database).render_as_string(False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
    env.update(
        AUDITOR_DATABASE_URL=url,
        AUDITOR_BROKER_URL=f"redis://127.0.0.1:6379/{REDIS_DB}",
        AUDITOR_BROKER_KEY_PREFIX=prefix,
        AUDITOR_SCAN_INTERVAL_SECONDS="1",
        # The webhook receiver listens on loopback: the operator allows it for the deployment.
        AUDITOR_ALLOW_PRIVATE_TARGETS="127.0.0.0/8",
        PYTHONUNBUFFERED="1",
    )
    topo = Topology(env, tmp)
    topo.webhook_url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"  # type: ignore[attr-defined]
    try:
        yield topo
    finally:
        for process in topo.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        receiver.shutdown()
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        client = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def _labels() -> list[dict]:
    """Three raters on 40 items; r3 disagrees on every fourth item, so kappa_S < 0.99."""
    rows = []
    for i in range(40):
        truth = "yes" if i % 3 else "no"
        for rater in ("r1", "r2", "r3"):
            label = truth
            if rater == "r3" and i % 4 == 0:
                label = "no" if truth == "yes" else "yes"
            rows.append({"item": f"i{i:02d}", "rater": rater, "label": label})
    return rows


def test_setup_with_the_cli_and_start_the_processes(topology: Topology) -> None:
    t = topology
    t.run("db", "upgrade")
    t.run("project", "create", SLUG, "--categories", "yes,no", "--recompute-interval", "2")
    t.key = t.run("keys", "create", SLUG, "--role", "admin").split()[-1]
    t.run("alerts", "channel", "add", SLUG, "hook", "--kind", "webhook",
          "--url", t.webhook_url)  # type: ignore[attr-defined]  # fmt: skip
    t.run("alerts", "add", SLUG, "--metric", "kappa_s", "--below", "0.99", "--min-n", "1",
          "--name", "low", "--channel", "hook")  # fmt: skip
    port = _free_port()
    t.base_url = f"http://127.0.0.1:{port}"
    t.start("api", [str(BIN / "auditor"), "serve", "--host", "127.0.0.1", "--port", str(port)])
    celery = [str(BIN / "celery"), "-A", "workers"]
    t.start("worker", [*celery, "worker", "--loglevel", "INFO", "--concurrency", "1",
                       "--without-gossip", "--without-mingle", "--without-heartbeat"])  # fmt: skip
    t.start("beat", [*celery, "beat", "--loglevel", "INFO",
                     "--schedule", str(t.tmp / "beat-schedule")])  # fmt: skip
    wait_for(lambda: _answers(t.base_url), 30, "the API to answer /healthz")
    wait_for(lambda: "ready." in t.log("worker"), 60, "the worker to be ready")
    wait_for(lambda: "beat: Starting" in t.log("beat"), 60, "beat to start")
    for name, process in t.processes.items():
        assert process.poll() is None, f"{name} exited:\n{t.log(name)}"


def test_labels_over_http_become_a_snapshot_in_the_history(topology: Topology) -> None:
    t = topology
    response = httpx.post(
        f"{t.base_url}/api/v1/projects/{SLUG}/labels", json={"labels": _labels()},
        headers={"Authorization": f"Bearer {t.key}"}, timeout=30,
    )  # fmt: skip
    assert response.status_code in (200, 201), response.text
    latest = wait_for(
        lambda: (
            (r := t.get(f"/api/v1/projects/{SLUG}/snapshots/latest")).status_code == 200
            and r.json()
        ),
        30,
        "a snapshot from the worker",
    )
    assert latest["n_labels"] == 120
    kappa = latest["measures"]["kappa_s"]["value"]
    assert kappa is not None and kappa < 0.99
    history = t.get(f"/api/v1/projects/{SLUG}/history", metric="kappa_s", scope="cumulative")
    assert history.status_code == 200, history.text
    values = [p["value"] for p in history.json()["points"]]
    assert values and values[-1] == pytest.approx(kappa)
    t.kappa = kappa  # type: ignore[attr-defined]


def test_metrics_show_the_value(topology: Topology) -> None:
    t = topology
    text = httpx.get(f"{t.base_url}/metrics", timeout=10).text
    wanted = f'auditor_metric_value{{metric="kappa_s",project="{SLUG}",scope="cumulative"'
    lines = [line for line in text.splitlines() if line.startswith(wanted)]
    assert lines, f"no {wanted} in /metrics"
    assert float(lines[0].rsplit(" ", 1)[1]) == pytest.approx(t.kappa)  # type: ignore[attr-defined]


def test_alert_fires_to_the_webhook(topology: Topology) -> None:
    wait_for(lambda: Receiver.received, 30, "the firing notice at the webhook receiver")
    notice = Receiver.received[0]
    assert notice["body"]["kind"] == "firing", notice["body"]
    assert notice["body"]["event_id"], notice["body"]
    assert any(k.lower() == "x-auditor-signature" for k in notice["headers"]), notice["headers"]


def test_every_process_stops_cleanly_on_sigterm(topology: Topology) -> None:
    t = topology
    for name in ("beat", "worker", "api"):
        process = t.processes[name]
        os.killpg(process.pid, signal.SIGTERM)
        try:
            code = process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{name} still running {STOP_TIMEOUT} s after SIGTERM") from None
        log = t.log(name)[-3000:]
        if name == "api":
            # uvicorn (>= 0.29) shuts down gracefully, then re-raises the signal it caught so
            # the parent sees the real cause: -SIGTERM after a complete shutdown is clean.
            assert code in (0, -signal.SIGTERM), f"api exited with {code}:\n{log}"
            assert "Application shutdown complete" in log, f"api did not shut down:\n{log}"
        else:
            assert code == 0, f"{name} exited with {code}:\n{log}"


def _answers(base_url: str) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200
    return False


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
