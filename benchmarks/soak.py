"""Soak: N clients post labels for T seconds against the distributed topology on loopback.

    .venv/bin/python benchmarks/soak.py [--clients 8] [--seconds 60] [--batch 40] [--scan 5]
        [--postgres-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]
        [--database auditor_soak_<hex>] [--redis-url redis://127.0.0.1:6379/14]

Runs from the project's own venv (``make .venv/.installed``: it needs nothing but what the
project installs, no test tools). The topology is the compose one as native processes (as in
tests/e2e/topology): a fresh PostgreSQL database (``--database``, created through
``--postgres-url`` and dropped at the end), the Redis database of ``--redis-url`` under a key
prefix of its own (deleted at the end), ``auditor serve`` (one uvicorn worker), one Celery
worker (concurrency 1) and one beat scanning every ``--scan`` seconds (default 5); the
project's tick is one second, so a recompute follows every scan while labels arrive. Each
client brings a rater the project has never seen every ``--new-rater-seconds``, and an admin
thread adds a category every 10 s that the clients then use: the load that made recomputes
fail before issue 11.

Printed: 5xx (and other non-2xx) answers, labels acknowledged vs stored, p50/p95 ingest
latency, failed recomputes (recorded failures, and failures/retries in the worker log), the
commit-to-snapshot lag (from a batch's 2xx to the first cumulative snapshot computed after
it that covers its highest label id) against the scan interval, and /healthz at the end.
The machine is shared: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
import redis
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from auditor.services.access.keys import create_key  # noqa: E402
from auditor.services.access.public_ids import load_public_ids  # noqa: E402
from auditor.services.projects.projects import create_project  # noqa: E402
from auditor.services.recompute.recompute import find_project_id  # noqa: E402
from auditor.storage import migrate  # noqa: E402
from auditor.storage.db import make_engine  # noqa: E402
from auditor.storage.unit_of_work import UnitOfWork  # noqa: E402

BIN = Path(sys.executable).parent
SLUG = "soak"
POSTGRES_URL = os.environ.get(
    "AUDITOR_SOAK_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("AUDITOR_SOAK_REDIS_URL", "redis://127.0.0.1:6379/14")


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


@dataclass
class Post:
    acked_at: float  # wall clock (compared with snapshots' computed_at)
    latency: float
    status: int
    inserted: int = 0
    max_label_id: int | None = None  # opaque, as the API shows it; decoded after the run


@dataclass
class Load:
    base: str
    key: str
    admin_key: str
    batch: int
    new_rater_seconds: float
    categories: list[str] = field(default_factory=lambda: ["yes", "no"])
    posts: list[Post] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def client(self, number: int, until: float) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=self.base, headers=headers, timeout=60) as http:
            n = 0
            began = time.monotonic()
            while time.monotonic() < until:
                generation = int((time.monotonic() - began) // self.new_rater_seconds)
                at = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
                names = list(self.categories)
                labels = [
                    {
                        "item": f"c{number}-i{(n * 7 + i) % 200}",
                        # three steady raters, and one the project has never seen every
                        # new_rater_seconds
                        "rater": f"c{number}-new{generation}" if i % 4 == 0 else f"s{i % 3}",
                        "label": names[(n + i) % len(names)],
                        "labeled_at": at,
                    }
                    for i in range(self.batch)
                ]
                started = time.perf_counter()
                try:
                    response = http.post(f"/api/v1/projects/{SLUG}/labels", json={"labels": labels})
                except httpx.HTTPError as error:
                    self.errors.append(f"client {number}: {error!r}")
                    continue
                post = Post(time.time(), time.perf_counter() - started, response.status_code)
                if response.status_code < 300:
                    body = response.json()
                    post.inserted, post.max_label_id = body["inserted"], body["max_label_id"]
                self.posts.append(post)
                n += 1

    def admin(self, until: float) -> None:
        headers = {"Authorization": f"Bearer {self.admin_key}"}
        k = 0
        while time.monotonic() + 10 < until:
            time.sleep(10)
            name = f"extra{k}"
            response = httpx.post(
                f"{self.base}/api/v1/projects/{SLUG}/categories",
                json={"names": [name]},
                headers=headers,
                timeout=30,
            )
            if response.status_code < 300:
                self.categories.append(name)
            else:
                self.errors.append(f"add category: {response.status_code} {response.text[:200]}")
            k += 1


def _start(name: str, command: list[str], env: dict[str, str], logs: Path) -> subprocess.Popen:
    sink = (logs / f"{name}.log").open("wb")
    return subprocess.Popen(
        command, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
    )


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _lags(posts: list[Post], snapshots: list[tuple[float, int]]) -> list[float]:
    lags = []
    for post in posts:
        if not post.inserted or post.max_label_id is None:
            continue
        covering = [
            t for t, watermark in snapshots if t >= post.acked_at and watermark >= post.max_label_id
        ]
        lags.append(min(covering) - post.acked_at if covering else float("inf"))
    return lags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--scan", type=float, default=5.0, help="scan interval, seconds")
    parser.add_argument(
        "--new-rater-seconds", type=float, default=5.0, help="each client: a new rater this often"
    )
    parser.add_argument(
        "--postgres-url",
        default=POSTGRES_URL,
        help="a PostgreSQL URL whose user may create databases (env AUDITOR_SOAK_POSTGRES_URL)",
    )
    parser.add_argument(
        "--database", default=None, help="name of the database to create (dropped at the end)"
    )
    parser.add_argument(
        "--redis-url",
        default=REDIS_URL,
        help="the broker: a Redis URL with its database number (env AUDITOR_SOAK_REDIS_URL)",
    )
    args = parser.parse_args()

    database = args.database or f"auditor_soak_{uuid.uuid4().hex[:8]}"
    prefix = f"auditor-soak-{uuid.uuid4().hex[:8]}:"
    admin_url = args.postgres_url
    url = make_url(admin_url).set(database=database).render_as_string(False)
    with psycopg.connect(_libpq(admin_url), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    logs = Path(tempfile.mkdtemp(prefix="auditor-soak-"))
    processes: dict[str, subprocess.Popen] = {}
    engine = None
    try:
        migrate.upgrade(url)
        engine = make_engine(url)
        create_project(
            UnitOfWork(engine), SLUG, ["yes", "no"], windows_days=(7,), recompute_interval_seconds=1
        )
        key = create_key(UnitOfWork(engine), SLUG, "ingest")[1]
        admin_key = create_key(UnitOfWork(engine), SLUG, "admin")[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
        env.update(
            AUDITOR_DATABASE_URL=url,
            AUDITOR_BROKER_URL=args.redis_url,
            AUDITOR_BROKER_KEY_PREFIX=prefix,
            AUDITOR_SCAN_INTERVAL_SECONDS=str(args.scan),
            AUDITOR_LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        celery = [str(BIN / "celery"), "-A", "workers"]
        processes["api"] = _start(
            "api", [str(BIN / "auditor"), "serve", "--port", str(port)], env, logs
        )
        processes["worker"] = _start(
            "worker",
            [
                *celery,
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                "1",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            env,
            logs,
        )
        processes["beat"] = _start(
            "beat",
            [*celery, "beat", "--loglevel", "INFO", "--schedule", str(logs / "beat-schedule")],
            env,
            logs,
        )
        worker_log, beat_log = logs / "worker.log", logs / "beat.log"
        _wait(lambda: "ready." in worker_log.read_text(errors="replace"), 90, "the worker")
        _wait(lambda: "beat: Starting" in beat_log.read_text(errors="replace"), 90, "beat")

        def healthy() -> bool:
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
            return False

        _wait(healthy, 60, "/healthz 200")

        load = Load(base, key, admin_key, args.batch, args.new_rater_seconds)
        until = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=load.client, args=(c, until)) for c in range(args.clients)
        ]
        threads.append(threading.Thread(target=load.admin, args=(until,)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        ended = time.time()

        def cumulative() -> list[tuple[float, int, int]]:
            with psycopg.connect(_libpq(url)) as c:
                rows = c.execute(
                    "SELECT computed_at, watermark, project_label_count FROM snapshots"
                    " WHERE scope = 'cumulative' ORDER BY computed_at"
                ).fetchall()
            return [(int(r[0]) / 1e6, int(r[1]), int(r[2])) for r in rows]

        with psycopg.connect(_libpq(url)) as c:
            stored = int(c.execute("SELECT count(*) FROM labels").fetchone()[0])
        _wait(
            lambda: any(count == stored for _, _, count in cumulative()),
            120,
            "a snapshot of every stored label",
        )
        caught_up = time.time() - ended
        with psycopg.connect(_libpq(url)) as c:
            recorded = int(
                c.execute("SELECT coalesce(sum(failures), 0) FROM recompute_failures").fetchone()[0]
            )
        health = httpx.get(f"{base}/healthz", timeout=5)
        worker_text = worker_log.read_text(errors="replace")
        snapshots = cumulative()
        # The API shows opaque label ids; the snapshots' watermarks are the stored ids.
        ids = load_public_ids(UnitOfWork(engine))
        project_id = find_project_id(UnitOfWork(engine), SLUG)
        for post in load.posts:
            if post.max_label_id is not None:
                post.max_label_id = ids.decode("label", project_id, post.max_label_id)
    finally:
        for process in processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        if engine is not None:
            engine.dispose()
        with psycopg.connect(_libpq(admin_url), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        client = redis.Redis.from_url(args.redis_url)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()

    posts = load.posts
    ok = [p for p in posts if p.status < 300]
    acknowledged = sum(p.inserted for p in ok)
    latencies = [p.latency * 1000 for p in ok]
    lags = _lags(ok, [(t, w) for t, w, _ in snapshots])
    finite = [lag for lag in lags if lag != float("inf")]
    log_failures = len(re.findall(r"recompute project=\d+ tick=\d+ failed:", worker_text))
    log_failures += worker_text.count("raised unexpected")
    print(
        f"soak: {args.clients} clients x {args.seconds:g} s, batch {args.batch}, "
        f"scan every {args.scan:g} s, load average {os.getloadavg()[0]:.1f} (2 shared cores)"
    )
    print(
        f"requests             {len(posts)} ({len(ok)} 2xx), "
        f"5xx {sum(p.status >= 500 for p in posts)}, other non-2xx "
        f"{sum(300 <= p.status < 500 for p in posts)}, client errors {len(load.errors)}"
    )
    print(
        f"labels               acknowledged {acknowledged}, stored {stored}, "
        f"lost {acknowledged - stored if acknowledged > stored else 0}"
    )
    print(
        f"ingest latency       p50 {_percentile(latencies, 0.5):.1f} ms, "
        f"p95 {_percentile(latencies, 0.95):.1f} ms"
    )
    print(
        f"recomputes           {len(snapshots)} cumulative snapshots; failed: {recorded} recorded, "
        f"{log_failures} in the worker log; task retries {worker_text.count('Retry in')}"
    )
    if finite:
        shown = (
            f"p50 {statistics.median(finite):.2f} s, p95 {_percentile(finite, 0.95):.2f} s, "
            f"max {max(finite):.2f} s"
        )
    else:
        shown = "no batch covered by a snapshot"
    print(
        f"commit-to-snapshot   {shown} ({len(lags) - len(finite)} batches never covered); "
        f"two scan intervals = {2 * args.scan:g} s; caught up {caught_up:.1f} s after the load"
    )
    print(f"/healthz at the end  {health.status_code} {health.json().get('status')}")
    for error in load.errors[:5]:
        print(f"  {error}")


if __name__ == "__main__":
    main()
