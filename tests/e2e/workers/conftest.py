"""Real Celery worker and beat processes on loopback, against PostgreSQL and Redis.

Every test gets its own PostgreSQL database (``auditor_t_<hex>``, migrated, dropped after)
and its own Redis key prefix on DB 13 (``AUDITOR_BROKER_KEY_PREFIX``), so runs never see each
other's queues. Every process is started in its own process group and killed (SIGKILL to the
group) in the finaliser, whatever the test did. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
import redis
from sqlalchemy.engine import make_url

from auditor.storage import migrate
from tests.services import POSTGRES_ADMIN_URL, require_postgres, require_redis
from tests.timing import scaled

REPO = Path(__file__).resolve().parents[3]
REDIS_DB = 13
SCAN_INTERVAL = 1.0  # on a quiet machine; a cluster stretches it (tests/timing.py)


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def wait_for(predicate: Callable[[], object], timeout: float, what: str, step: float = 0.1):
    """``timeout`` is for a quiet machine: stretched by the measured slowness (tests/timing.py)."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


class Process:
    def __init__(self, name: str, popen: subprocess.Popen, log: Path) -> None:
        self.name, self.popen, self.log = name, popen, log

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole process group (main process and pool children)."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=10)

    def pids(self) -> list[int]:
        try:
            main = psutil.Process(self.popen.pid)
            return [main.pid] + [c.pid for c in main.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []


class Cluster:
    """Starts workers and beats with one environment; kills them all at the end."""

    def __init__(self, database_url: str, prefix: str, tmp: Path) -> None:
        self.database_url, self.prefix, self.tmp = database_url, prefix, tmp
        self.processes: list[Process] = []
        self.broker_url = f"redis://127.0.0.1:6379/{REDIS_DB}"
        # Measured when the cluster starts: at load 10 a scan and a recompute take longer,
        # and the beat's interval with them, so "within two scan intervals" keeps its verdict.
        self.scan_interval = scaled(SCAN_INTERVAL)

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
        env.update(
            AUDITOR_DATABASE_URL=self.database_url,
            AUDITOR_BROKER_URL=self.broker_url,
            AUDITOR_BROKER_KEY_PREFIX=self.prefix,
            AUDITOR_SCAN_INTERVAL_SECONDS=str(self.scan_interval),
            AUDITOR_RECOMPUTE_VISIBILITY_TIMEOUT_SECONDS="5",
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env

    def _start(self, name: str, args: list[str], **extra: str) -> Process:
        log = self.tmp / f"{name}.log"
        handle = log.open("wb")
        popen = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "workers", *args],
            cwd=REPO,
            env=self.env(**extra),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        handle.close()
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def worker(self, name: str, **extra: str) -> Process:
        process = self._start(
            name,
            [
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                "1",
                "-n",
                f"{name}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            **extra,
        )
        wait_for(
            lambda: "ready." in process.text() or process.popen.poll() is not None,
            60,
            f"{name} to be ready",
        )
        assert process.popen.poll() is None, process.text()
        return process

    def beat(self, name: str) -> Process:
        schedule = self.tmp / f"{name}-schedule"
        process = self._start(name, ["beat", "--loglevel", "INFO", "--schedule", str(schedule)])
        wait_for(
            lambda: "beat: Starting" in process.text() or process.popen.poll() is not None,
            60,
            f"{name} to start",
        )
        assert process.popen.poll() is None, process.text()
        return process

    def kill_all(self) -> None:
        for process in self.processes:
            process.kill()

    def redis_connections(self) -> list[str]:
        """Addresses (ip:port) of this cluster's connections to Redis, as Redis lists them."""
        ports = set()
        for process in self.processes:
            for pid in process.pids():
                try:
                    for c in psutil.Process(pid).net_connections(kind="tcp"):
                        if c.raddr and c.raddr.port == 6379:
                            ports.add(f"{c.laddr.ip}:{c.laddr.port}")
                except psutil.NoSuchProcess:
                    continue
        return sorted(ports)


@pytest.fixture
def pg_url() -> Iterator[str]:
    require_postgres()
    name = f"auditor_t_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        migrate.upgrade(url)
        yield url
    finally:
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    require_redis()
    client = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    yield client
    client.close()


def drop_prefixed_keys(client: redis.Redis, prefix: str) -> int:
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    return client.delete(*keys) if keys else 0


@pytest.fixture
def cluster(pg_url: str, redis_client: redis.Redis, tmp_path: Path) -> Iterator[Cluster]:
    prefix = f"auditor-t-{uuid.uuid4().hex[:8]}:"
    running = Cluster(pg_url, prefix, tmp_path)
    try:
        yield running
    finally:
        running.kill_all()
        drop_prefixed_keys(redis_client, prefix)


RUN_LINE = re.compile(r"recompute finished project=(\d+) start=([\d.]+) end=([\d.]+)")


def run_intervals(*processes: Process) -> list[tuple[float, float]]:
    """(start, end) of every recompute that held the project lock, from the worker logs."""
    spans = []
    for process in processes:
        spans += [(float(m[2]), float(m[3])) for m in RUN_LINE.finditer(process.text())]
    return sorted(spans)
