"""The Python client against raw httpx: the same label batches posted to a local server.

    .venv/bin/python benchmarks/client.py [--labels 1000000] [--batch 10000] [--rounds 3]

Each round posts ``--labels`` labels through each side into one PostgreSQL database
(``auditor_b_<hex>``, fresh, dropped at the end) served by ``auditor serve`` (one uvicorn
worker, recompute timer off), batch by batch, alternated:

- **client**: ``Client.post_labels(batch)`` (an Idempotency-Key per batch, the retry rules,
  the answer parsed into a ``PostResult``);
- **raw**: ``httpx.Client.post(url, json={"labels": batch}, headers={"Idempotency-Key": ...})``,

each on its own keep-alive connection. Batch k of each side holds the same labels but for the
item names; the side that goes first alternates from one pair of batches to the next, so a
machine shared with other work (its load drifts over minutes) weighs on both alike. A side's
rate is its labels over the sum of its batches' times. It prints each round's rates and their
ratio client/raw, the median over rounds (target >= 0.90), the median of the paired batch
ratios, the client's own CPU seconds (this process; the server is another) and the load
average. The tables are emptied before each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
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


def batch_of(side: str, round_: int, k: int, size: int) -> list[dict[str, str]]:
    """Five raters per item, no time and no key: every label is a new look."""
    first = k * size
    return [
        {"item": f"{side}{round_}-{n // 5}", "rater": f"r{n % 5}", "label": CATEGORIES[n % 4]}
        for n in range(first, first + size)
    ]


class Raw:
    def __init__(self, base: str, key: str) -> None:
        self.url = f"{base}/api/v1/projects/bench/labels"
        self.http = httpx.Client(timeout=120, headers={"Authorization": f"Bearer {key}"})

    def post(self, rows: list[dict[str, str]], key: str) -> int:
        response = self.http.post(self.url, json={"labels": rows}, headers={"Idempotency-Key": key})
        response.raise_for_status()
        return int(response.json()["inserted"])


def one_round(client: Client, raw: Raw, round_: int, args: argparse.Namespace) -> dict[str, float]:
    """Seconds and CPU seconds per side, and the paired batch ratios, for one round."""
    spent = {"client": 0.0, "raw": 0.0, "client_cpu": 0.0, "raw_cpu": 0.0}
    pairs = []
    for k in range(args.labels // args.batch):
        times = {}
        for side in ("client", "raw") if k % 2 == 0 else ("raw", "client"):
            rows = batch_of(side, round_, k, args.batch)
            started, cpu = time.perf_counter(), time.process_time()
            if side == "client":
                inserted = client.post_labels(rows, idempotency_key=f"c{round_}-{k}").inserted
            else:
                inserted = raw.post(rows, f"r{round_}-{k}")
            times[side] = time.perf_counter() - started
            spent[f"{side}_cpu"] += time.process_time() - cpu
            assert inserted == args.batch, (side, inserted)
            spent[side] += times[side]
        pairs.append(times["raw"] / times["client"])
    spent["paired"] = statistics.median(pairs)
    return spent


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
    paired: list[float] = []
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
        with serving(url, **env) as (base, _), Client(base, key, project="bench") as client:
            raw = Raw(base, key)
            for round_ in range(args.rounds):
                empty_tables(url)
                spent = one_round(client, raw, round_, args)
                for side in ("client", "raw"):
                    rates[side].append(args.labels / spent[side])
                    cpu[side].append(spent[f"{side}_cpu"])
                paired.append(spent["paired"])
                print(
                    f"round {round_ + 1}: client {rates['client'][-1]:,.0f} labels/s, raw "
                    f"{rates['raw'][-1]:,.0f}: ratio {rates['client'][-1] / rates['raw'][-1]:.3f} "
                    f"(paired batches: median {spent['paired']:.3f}); CPU here: client "
                    f"{spent['client_cpu']:.2f} s, raw {spent['raw_cpu']:.2f} s; "
                    f"load {os.getloadavg()[0]:.2f}"
                )
            raw.http.close()
    finally:
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    ratios = [c / r for c, r in zip(rates["client"], rates["raw"], strict=True)]
    print(
        f"median over rounds: client/raw {statistics.median(ratios):.3f} (target >= 0.90; per "
        f"round {', '.join(f'{r:.3f}' for r in ratios)}); paired batches "
        f"{statistics.median(paired):.3f}; CPU here per {args.labels:,} labels: client "
        f"{statistics.median(cpu['client']):.2f} s, raw {statistics.median(cpu['raw']):.2f} s"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
