"""How long the integration tests' PostgreSQL reset takes (issue 23, item 1).

Alternates the old reset (``TRUNCATE <every table> RESTART IDENTITY CASCADE`` through a new
SQLAlchemy engine, as tests/integration/conftest.py did) and the new one (DELETE children
first plus a sequence reset in one round trip, ``_empty_all``) on a migrated throwaway
database holding a small project, as a test leaves it. Prints the medians, their ratio and
the load average.

    nice -n 10 .venv/bin/python benchmarks/test_reset.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from sqlalchemy import inspect, text

from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package
from tests.integration.conftest import _empty_all, postgres_database


def truncate_all(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            tables = [t for t in inspect(connection).get_table_names() if t != "alembic_version"]
            quoted = ", ".join(f'"{t}"' for t in tables)
            connection.execute(text(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()


def fill(url: str) -> None:
    engine = make_engine(url)
    try:
        uow = UnitOfWork(engine)
        create_project(uow, "p", ["yes", "no"])
        labels = [
            {"item": f"i{i}", "rater": r, "label": "yes" if (i + k) % 3 else "no"}
            for i in range(30)
            for k, r in enumerate(("a", "b", "c"))
        ]
        ingest_labels(uow, "p", labels)
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    times: dict[str, list[float]] = {"truncate": [], "delete": []}
    with postgres_database() as url:
        migrate.upgrade(url)
        for _ in range(rounds):
            for name, reset in (("truncate", truncate_all), ("delete", _empty_all)):
                fill(url)
                started = time.perf_counter()
                reset(url)
                times[name].append(time.perf_counter() - started)
    old, new = (statistics.median(times[k]) * 1000 for k in ("truncate", "delete"))
    print(f"load average {os.getloadavg()[0]:.2f}, {rounds} alternated rounds")
    print(f"TRUNCATE ... RESTART IDENTITY: median {old:.0f} ms")
    print(f"DELETE in order + setval:      median {new:.0f} ms  ({old / new:.1f}x faster)")


if __name__ == "__main__":
    main()
