"""The Python client against raw httpx: the same label batches posted to a local server.

    .venv/bin/python benchmarks/client.py [--labels 1000000] [--batch 10000] [--rounds 3]

Each round posts ``--labels`` labels twice into a fresh PostgreSQL database (``auditor_b_<hex>``,
dropped at the end) served by ``auditor serve`` (one uvicorn worker, recompute timer off):

- **client**: ``Client.post_labels(labels, batch_size=...)`` (batches, an Idempotency-Key per
  batch, the retry rules, the answers parsed into a ``PostResult``);
- **raw**: ``httpx.Client.post(url, json={"labels": batch}, headers={"Idempotency-Key": ...})``
  for the same batches, one after the other on one keep-alive connection.

Both build the same label dicts from the same generator while they post. The order alternates
(client first in odd rounds, raw first in even ones) and the tables are emptied before each
run, so neither side inherits a bigger table. It prints labels/s per run, the client's own CPU
seconds (this process; the server is another one), the median ratio client/raw (target >= 0.90)
and the load average (the machine is shared).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.client import Client
from auditor.services.access.keys import create_key
from auditor.services.projects.projects import create_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import serving
from tests.services import POSTGRES_ADMIN_URL

CATEGORIES = ["normal", "benign", "malignant", "other"]
EMPTIED = "labels, items, raters, sessions, imports, idempotency_records"


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def labels(total: int, run: int) -> Iterator[dict[str, str]]:
    """Five raters per item, no time and no key: every label is a new look."""
    for n in range(total):
        yield {"item": f"i{run}-{n // 5}", "rater": f"r{n % 5}", "label": CATEGORIES[n % 4]}


def post_with_client(base: str, key: str, total: int, batch: int, run: int) -> int:
    with Client(base, key, project="bench") as client:
        result = client.post_labels(labels(total, run), batch_size=batch, idempotency_key=f"c{run}")
    return result.inserted


def post_raw(base: str, key: str, total: int, batch: int, run: int) -> int:
    url = f"{base}/api/v1/projects/bench/labels"
    inserted = 0
    rows = labels(total, run)
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {key}"}) as http:
        for start in itertools.count(0, batch):
            chunk = list(itertools.islice(rows, batch))
            if not chunk:
                return inserted
            headers = {"Idempotency-Key": f"r{run}.{start}-{start + len(chunk)}"}
            response = http.post(url, json={"labels": chunk}, headers=headers)
            response.raise_for_status()
            inserted += response.json()["inserted"]
    raise AssertionError("unreachable")


def empty_tables(url: str) -> None:
    with psycopg.connect(_libpq(url), autocommit=True) as connection:
        connection.execute(f"TRUNCATE {EMPTIED} CASCADE")
        connection.execute("VACUUM ANALYZE labels")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    name = f"auditor_b_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    rates: dict[str, list[float]] = {"client": [], "raw": []}
    cpu: dict[str, list[float]] = {"client": [], "raw": []}
    try:
        migrate.upgrade(url)
        engine = make_engine(url)
        create_project(UnitOfWork(engine), "bench", CATEGORIES)
        key = create_key(UnitOfWork(engine), "bench", "ingest")[1]
        engine.dispose()
        env = {
            "AUDITOR_SCAN_INTERVAL_SECONDS": "86400",  # no recompute during the runs
            "AUDITOR_API_MAX_BATCH_LABELS": str(max(args.batch, 10_000)),
        }
        print(f"load average before: {os.getloadavg()}")
        with serving(url, **env) as (base, _):
            for round_ in range(args.rounds):
                order = ("client", "raw") if round_ % 2 == 0 else ("raw", "client")
                for side in order:
                    empty_tables(url)
                    run = round_ * 2 + order.index(side)
                    post = post_with_client if side == "client" else post_raw
                    started, cpu_started = time.perf_counter(), time.process_time()
                    inserted = post(base, key, args.labels, args.batch, run)
                    seconds = time.perf_counter() - started
                    cpu[side].append(time.process_time() - cpu_started)
                    assert inserted == args.labels, (side, inserted)
                    rates[side].append(args.labels / seconds)
                    print(
                        f"round {round_ + 1} {side:<6}: {args.labels / seconds:>9,.0f} labels/s "
                        f"({seconds:.1f} s; this process {cpu[side][-1]:.2f} s CPU); "
                        f"load {os.getloadavg()[0]:.2f}"
                    )
    finally:
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    client, raw = statistics.median(rates["client"]), statistics.median(rates["raw"])
    ratios = [c / r for c, r in zip(rates["client"], rates["raw"], strict=True)]
    print(
        f"median: client {client:,.0f} labels/s, raw httpx {raw:,.0f}: ratio {client / raw:.3f} "
        f"(per round {', '.join(f'{r:.3f}' for r in ratios)}; target >= 0.90); client CPU "
        f"{statistics.median(cpu['client']):.2f} s vs raw {statistics.median(cpu['raw']):.2f} s "
        f"per {args.labels:,} labels"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
