"""Where a realistic import's time goes (issue 22 item 6). Not part of the test suite.

Sets up what ``ingest.py --realistic --into-holding`` sets up (a project holding a first
realistic file, VACUUM ANALYZEd), then imports the second file once under cProfile, with the
staged import's set-based statements (the labels, items and stored-repeat INSERTs) run as
``EXPLAIN (ANALYZE, BUFFERS)``: the plans show which node and which trigger take the
statement's time, the profile what the Python side spends (parse, validate, stage). EXPLAIN
ANALYZE times every node (some overhead), so the seconds here are not the benchmark's.

    .venv/bin/python benchmarks/ingest_explain.py [--rows 1000000] [--top 25]

Runs in a throwaway database and a temporary directory.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ingest as bench
import psycopg

from auditor.storage.staging import Staging

EXPLAINED = ("INSERT INTO labels", "INSERT INTO items", "INSERT INTO import_repeat")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--top", type=int, default=25)
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="auditor-explain-") as name:
        directory = Path(name)
        first = bench.realistic_rows(options.rows, seed=7)
        stored = int(first["item"].max()) + 1
        second = bench.realistic_rows(options.rows, seed=8, first_item=stored // 2, start_day=30)
        bench.write_realistic(directory / "first.csv", first)
        bench.write_realistic(directory / "second.csv", second)
        with bench.postgres_database() as url:
            bench.import_seconds(url, directory / "first.csv")
            with psycopg.connect(bench._libpq(url), autocommit=True) as db:
                db.execute("VACUUM ANALYZE labels")
                db.execute("CHECKPOINT")
            plans: list[tuple[float, str]] = []
            run = Staging._run

            def explained(self: Staging, sql: str, **params: Any) -> Any:
                if not sql.startswith(EXPLAINED):
                    return run(self, sql, **params)
                started = time.perf_counter()
                lines = run(self, "EXPLAIN (ANALYZE, BUFFERS) " + sql, **params).scalars().all()
                plans.append((time.perf_counter() - started, "\n".join(lines)))
                return SimpleNamespace(rowcount=0)  # the labels' count is not read here

            Staging._run = explained  # type: ignore[method-assign]
            profile = cProfile.Profile()
            started = time.perf_counter()
            profile.enable()
            try:
                seconds, _, _ = bench.import_into_seconds(url, directory / "second.csv")
            finally:
                profile.disable()
                Staging._run = run  # type: ignore[method-assign]
            print(f"import of {second['item'].shape[0]:,} labels into a project holding "
                  f"{first['item'].shape[0]:,}: {seconds:.1f} s (under cProfile and EXPLAIN "
                  f"ANALYZE; {time.perf_counter() - started:.1f} s with the set-up of the "
                  f"engine); load average {os.getloadavg()[0]:.2f}")  # fmt: skip
            for elapsed, plan in plans:
                print(f"\n--- {elapsed:.1f} s\n{plan}")
            print()
            pstats.Stats(profile).sort_stats("tottime").print_stats(options.top)


if __name__ == "__main__":
    main()
