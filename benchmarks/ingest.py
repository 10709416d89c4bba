"""Ingestion benchmark (issue 2, item 7). Not part of the test suite.

Generates 1M labels (100k items x 10 raters, 4 categories) as CSV, imports the file with the
service (the path of ``auditor import``) into PostgreSQL and into SQLite, and times, in the
same run, PostgreSQL's own ``COPY`` of the same file into a bare table of text columns.
Prints labels/s and the ratio to the raw COPY. With ``--rss`` it also imports a 10M-row file
in a child process (``auditor import``) and prints that process's peak RSS.

Also times, in the same database, PostgreSQL's COPY of 1M label-shaped rows into a table of
the labels' shape (``copy_floor.py``): the floor under any import.

Targets (issue 13): >= 250k labels/s into PostgreSQL and within 2x of the labels-shaped COPY;
SQLite >= 200k labels/s; peak RSS < 500 MB.

    .venv/bin/python benchmarks/ingest.py [--rows 1000000] [--keys] [--rss] [--skip-sqlite]

Everything runs in a throwaway database (``auditor_bench_<hex>``) and a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from copy_floor import best_copy, create_shaped, rows_as_copy_text
from sqlalchemy.engine import make_url

from auditor.ingestion.readers import LabelFileReader
from auditor.services.ingest.labels import import_batches
from auditor.services.projects.projects import create_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

ADMIN_URL = os.environ.get(
    "AUDITOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
CATEGORIES = ["a", "b", "c", "d"]
RATERS = 10
BATCH = 10_000


def generate(path: Path, rows: int, keys: bool) -> None:
    """rows // RATERS items, each labeled once by every rater, item by item, in time order."""
    rng = random.Random(1)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    header = "item,rater,label,labeled_at" + (",key" if keys else "")
    with path.open("w", buffering=1 << 20) as out:
        out.write(header + "\n")
        for n in range(rows):
            item, rater = divmod(n, RATERS)
            moment = (start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
            line = f"item{item},rater{rater},{CATEGORIES[rng.randrange(4)]},{moment}"
            out.write(f"{line},k{n}\n" if keys else line + "\n")


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def postgres_database() -> Iterator[str]:
    name = f"auditor_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq(ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def raw_copy_seconds(url: str, path: Path, columns: int) -> float:
    """PostgreSQL's COPY of the file into a bare table of text columns (no index, no key)."""
    names = ", ".join(f"c{i} text" for i in range(columns))
    with psycopg.connect(_libpq(url)) as connection:
        connection.execute(f"CREATE TABLE bare ({names})")
        connection.commit()
        started = time.perf_counter()
        with (
            connection.cursor() as cursor,
            cursor.copy("COPY bare FROM STDIN (FORMAT csv, HEADER)") as copy,
            path.open("rb") as source,
        ):
            while chunk := source.read(1 << 20):
                copy.write(chunk)
        connection.commit()
        elapsed = time.perf_counter() - started
        connection.execute("DROP TABLE bare")
        connection.commit()
    return elapsed


def import_seconds(url: str, path: Path) -> tuple[float, int]:
    migrate.upgrade(url)
    engine = make_engine(url)
    try:
        create_project(UnitOfWork(engine), "bench", CATEGORIES)
        started = time.perf_counter()
        result = import_batches(UnitOfWork(engine), "bench", LabelFileReader(path, BATCH))
        elapsed = time.perf_counter() - started
    finally:
        engine.dispose()
    if result.rejected:
        raise SystemExit(f"benchmark file rejected: {result.errors[:3]}")
    return elapsed, result.inserted


def peak_rss_of_import(url: str, path: Path) -> tuple[float, int]:
    """Seconds and peak RSS (bytes) of ``auditor import`` in a child process."""
    migrate.upgrade(url)
    engine = make_engine(url)
    create_project(UnitOfWork(engine), "rss", CATEGORIES)
    engine.dispose()
    env = {**os.environ, "AUDITOR_DATABASE_URL": url}
    command = [str(Path(sys.executable).parent / "auditor"), "import", "rss", str(path)]
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", action="store_true", help="add a client key column")
    parser.add_argument("--rss", action="store_true", help="also import 10M rows (slow)")
    parser.add_argument("--rss-rows", type=int, default=10_000_000)
    parser.add_argument("--skip-sqlite", action="store_true")
    options = parser.parse_args()

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="auditor-bench-") as directory:
        path = Path(directory) / "labels.csv"
        generate(path, options.rows, options.keys)
        size = path.stat().st_size / 1e6
        print(f"file: {options.rows:,} labels, {size:.0f} MB, keys={options.keys}")
        columns = 5 if options.keys else 4

        with postgres_database() as url:
            copy_time = raw_copy_seconds(url, path, columns)
            with psycopg.connect(_libpq(url), autocommit=True) as db:
                create_shaped(db)
                floor = best_copy(db, "shaped", rows_as_copy_text(options.rows), 1)
                db.execute("DROP TABLE shaped")
            pg_time, inserted = import_seconds(url, path)
        assert inserted == options.rows
        print(f"PostgreSQL raw COPY into a bare table: {copy_time:6.2f} s "
              f"({options.rows / copy_time:,.0f} rows/s)")  # fmt: skip
        print(f"PostgreSQL COPY into the labels' shape: {floor:6.2f} s "
              f"({options.rows / floor:,.0f} rows/s) [the floor]")  # fmt: skip
        print(f"PostgreSQL import (service):           {pg_time:6.2f} s "
              f"({options.rows / pg_time:,.0f} labels/s), {pg_time / copy_time:.1f}x the raw COPY, "
              f"{pg_time / floor:.1f}x the floor "
              "[targets: >= 250,000 labels/s, <= 2x the floor]")  # fmt: skip

        if not options.skip_sqlite:
            sqlite_time, _ = import_seconds(f"sqlite:///{Path(directory) / 'bench.db'}", path)
            print(f"SQLite import (service):               {sqlite_time:6.2f} s "
                  f"({options.rows / sqlite_time:,.0f} labels/s), "
                  f"{sqlite_time / copy_time:.1f}x the PostgreSQL raw COPY "
                  "[target: >= 200,000 labels/s]")  # fmt: skip

        if options.rss:
            path.unlink()
            generate(path, options.rss_rows, options.keys)
            with postgres_database() as url:
                seconds, peak = peak_rss_of_import(url, path)
            print(f"`auditor import` of {options.rss_rows:,} rows into PostgreSQL: "
                  f"{seconds:.0f} s, peak RSS {peak / 1e6:.0f} MB [target < 500 MB]")  # fmt: skip


if __name__ == "__main__":
    main()
