"""HTTP API benchmark on loopback, bounded: bulk label ingest and history latency.

    .venv/bin/python benchmarks/api.py [--labels 1000000] [--batch 5000] [--snapshots 100000]

1. Ingest: ``--labels`` labels through ``POST /api/v1/projects/{slug}/labels`` in batches of
   ``--batch`` into PostgreSQL (a fresh database ``auditor_b_<hex>``, dropped at the end),
   from ``--clients`` concurrent clients; prints labels/s (target >= 50,000/s).
2. History: ``--snapshots`` snapshots with one kappa_s point each, inserted straight through
   the tables, then ``--requests`` history requests (500 points, downsampled in SQL); prints
   p50/p95 (target p95 <= 50 ms).

3. ``--open-repeats N``: instead of 1 and 2, the ingest rate of (1) side by side in fresh
   databases without and with N open planned repeats in the project (the repeat planner's
   fulfilment runs in every ingest transaction), interleaved over ``--rounds`` rounds; prints
   each rate, the medians and their ratio (target: within 10%).

The server is ``auditor serve`` (one uvicorn worker) with the recompute timer off. The
machine is shared: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.domain import to_micros
from auditor.services.access.keys import create_key
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.models import Item, PlannedRepeat
from auditor.storage.snapshot_models import MetricPoint, Snapshot
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import serving
from tests.services import POSTGRES_ADMIN_URL

CATEGORIES = ["normal", "benign", "malignant", "other"]


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def ingest(base: str, key: str, total: int, batch: int, clients: int) -> float:
    headers = {"Authorization": f"Bearer {key}"}
    n_batches = total // batch

    def body(index: int) -> bytes:
        start = index * batch
        rows = ",".join(
            f'{{"item":"i{(start + j) // 5}","rater":"r{(start + j) % 5}",'
            f'"label":"{CATEGORIES[(start + j) % 4]}"}}'
            for j in range(batch)
        )
        return f'{{"labels":[{rows}]}}'.encode()

    bodies = [body(i) for i in range(min(n_batches, clients * 2))]  # reused ids: new items anyway
    client = httpx.Client(timeout=120, headers={**headers, "content-type": "application/json"})

    def post(index: int) -> int:
        response = client.post(f"{base}/api/v1/projects/bench/labels", content=body(index))
        response.raise_for_status()
        return int(response.json()["inserted"])

    del bodies
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        inserted = sum(pool.map(post, range(n_batches)))
    elapsed = time.perf_counter() - started
    assert inserted == n_batches * batch, inserted
    return inserted / elapsed


def insert_snapshots(url: str, project_id: int, count: int) -> None:
    engine = make_engine(url)
    t0 = datetime(2020, 1, 1, tzinfo=UTC)
    snapshots, points = [], []
    for i in range(count):
        at = to_micros(t0 + timedelta(minutes=10 * i))
        snapshots.append(
            {
                "id": i + 1, "project_id": project_id, "scope": "cumulative", "tick": i,
                "computed_at": at, "as_of": at, "window_start": None, "window_end": None,
                "watermark": i, "project_label_count": i, "n_labels": i, "n_items": i,
                "n_raters": 5, "n_pairable_items": i, "categories": CATEGORIES, "settings": {},
                "code_version": "bench", "seed": None, "interval_method": "none",
                "interval_level": None, "duration_ms": 1.0, "result": {},
            }
        )  # fmt: skip
        points.append(
            {
                "snapshot_id": i + 1, "project_id": project_id, "scope": "cumulative",
                "computed_at": at, "as_of": at, "metric": "kappa_s", "subject_kind": "project",
                "subject_id": "", "value": 0.5 + 0.4 * ((i * 7919) % 1000) / 1000,
                "ci_low": None, "ci_high": None, "n": i, "reason": None,
            }
        )  # fmt: skip
    with engine.begin() as connection:
        for start in range(0, count, 10_000):
            connection.execute(Snapshot.__table__.insert(), snapshots[start : start + 10_000])
            connection.execute(MetricPoint.__table__.insert(), points[start : start + 10_000])
        connection.exec_driver_sql(
            "SELECT setval('snapshots_id_seq', (SELECT max(id) FROM snapshots))"
        )
        connection.exec_driver_sql("ANALYZE snapshots")
        connection.exec_driver_sql("ANALYZE metric_points")
    engine.dispose()


def seed_open_repeats(url: str, project_id: int, count: int) -> None:
    """``count`` open planned repeats of the bench's raters on items of their own (so they
    stay open while the benchmark's labels arrive: every batch's join meets all of them)."""
    engine = make_engine(url)
    now = to_micros(datetime.now(UTC))
    week = 7 * 24 * 3600 * 1_000_000
    with engine.begin() as connection:
        raters = [
            connection.exec_driver_sql(
                "INSERT INTO raters (project_id, external_id, kind) "
                f"VALUES ({project_id}, 'r{r}', 'human') RETURNING id"
            ).scalar_one()
            for r in range(5)
        ]
        items = [
            {"project_id": project_id, "external_id": f"planned-{k}", "metadata": None}
            for k in range(count)
        ]
        connection.execute(Item.__table__.insert(), items)
        ids = connection.exec_driver_sql(
            f"SELECT id FROM items WHERE project_id = {project_id} ORDER BY id"
        ).scalars()
        rows = [
            {"project_id": project_id, "rater_id": raters[k % 5], "item_id": item,
             "first_labeled_at": now - week, "planned_at": now, "expires_at": now + week,
             "reason": "bench", "request_id": None, "status": "open",
             "fulfilled_label_id": None}
            for k, item in enumerate(ids)
        ]  # fmt: skip
        connection.execute(PlannedRepeat.__table__.insert(), rows)
        connection.exec_driver_sql("ANALYZE planned_repeats")
    engine.dispose()


def _fresh_database() -> tuple[str, str]:
    name = f"auditor_b_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return name, POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def _drop_database(name: str) -> None:
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def compare_open_repeats(args: argparse.Namespace) -> None:
    """Ingest rate without and with ``args.open_repeats`` open planned repeats, interleaved."""
    rates: dict[int, list[float]] = {0: [], args.open_repeats: []}
    env = {
        "AUDITOR_BROKER_URL": "redis://127.0.0.1:6379/15",
        "AUDITOR_API_MAX_BATCH_LABELS": str(max(args.batch, 10_000)),
    }
    print(f"load average before: {os.getloadavg()}")
    for round_ in range(args.rounds):
        for open_repeats in rates:
            name, url = _fresh_database()
            try:
                migrate.upgrade(url)
                engine = make_engine(url)
                create_project(UnitOfWork(engine), "bench", CATEGORIES)
                project_id = find_project_id(UnitOfWork(engine), "bench")
                key = create_key(UnitOfWork(engine), "bench", "admin")[1]
                engine.dispose()
                if open_repeats:
                    seed_open_repeats(url, project_id, open_repeats)
                with serving(url, **env) as (base, _):
                    rate = ingest(base, key, args.labels, args.batch, args.clients)
                rates[open_repeats].append(rate)
                print(f"round {round_ + 1}, {open_repeats:>6,} open repeats: {rate:,.0f} labels/s")
            finally:
                _drop_database(name)
    without, with_ = (statistics.median(r) for r in rates.values())
    print(
        f"median: {without:,.0f} labels/s without, {with_:,.0f} with {args.open_repeats:,} open "
        f"repeats: ratio {with_ / without:.3f} (target >= 0.90)"
    )
    print(f"load average after: {os.getloadavg()}")


def history_latency(base: str, key: str, requests: int) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    times = []
    with httpx.Client(timeout=30, headers=headers) as client:
        params = {"metric": "kappa_s", "points": 500}
        client.get(f"{base}/api/v1/projects/bench/history", params=params).raise_for_status()
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(f"{base}/api/v1/projects/bench/history", params=params)
            times.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
        assert len(response.json()["points"]) <= 500
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--snapshots", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--open-repeats", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.open_repeats:
        compare_open_repeats(args)
        return

    name = f"auditor_b_{uuid.uuid4().hex[:8]}"
    admin = _libpq(POSTGRES_ADMIN_URL)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        migrate.upgrade(url)
        engine = make_engine(url)
        create_project(UnitOfWork(engine), "bench", CATEGORIES)
        key = create_key(UnitOfWork(engine), "bench", "admin")[1]
        engine.dispose()
        env = {
            "AUDITOR_BROKER_URL": "redis://127.0.0.1:6379/15",  # timer off: no recompute here
            "AUDITOR_API_MAX_BATCH_LABELS": str(max(args.batch, 10_000)),
        }
        with serving(url, **env) as (base, _):
            print(f"load average before: {os.getloadavg()}")
            rate = ingest(base, key, args.labels, args.batch, args.clients)
            print(
                f"ingest: {args.labels:,} labels in batches of {args.batch:,} from "
                f"{args.clients} clients: {rate:,.0f} labels/s (target >= 50,000; "
                f"ratio {rate / 50_000:.2f})"
            )
            with psycopg.connect(_libpq(url)) as connection:
                project_id = connection.execute("SELECT id FROM projects").fetchone()[0]
            insert_snapshots(url, project_id, args.snapshots)
            times = history_latency(base, key, args.requests)
            p95 = statistics.quantiles(times, n=20)[18]
            print(
                f"history over {args.snapshots:,} snapshots, 500 points: "
                f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms "
                f"(target <= 50; ratio {p95 / 50:.2f})"
            )
            print(f"load average after: {os.getloadavg()}")
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
