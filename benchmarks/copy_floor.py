"""The floor under any ingestion into the labels table (issue 2, item 7's COPY ratio).

Times PostgreSQL's own COPY of the same 1M rows into a bare table and into a table of the
labels' shape: its primary key and the four indexes the schema needs ((project, id) for the
watermark and the loader, (project, labeled_at) for the windows, the natural identity (project,
item, rater, labeled_at) for re-imports, the unique (project, client key) index of the labels
that have a key), with no reference checks and no parsing in Python. Whatever the service does,
it cannot be faster than the second figure; its ratio to the first is printed.

    .venv/bin/python benchmarks/copy_floor.py [--rows 1000000]

Runs in a throwaway database (``auditor_floor_<hex>``).
"""

from __future__ import annotations

import argparse
import io
import os
import time
import uuid
from collections.abc import Iterator

import numpy as np
import psycopg

ADMIN_URL = os.environ.get("AUDITOR_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
FOUR_YEARS = 1461 * 86_400 * 1_000_000  # 2024 to 2028 in microseconds (two leap days)
COLUMNS = (
    "id bigint, project_id bigint, item_id bigint, rater_id bigint, session_id bigint, "
    "category_id bigint, labeled_at bigint, received_at bigint, client_key text"
)


def rows_as_copy_text(n: int) -> bytes:
    rng = np.random.default_rng(0)
    item = rng.integers(1, 100_000, n)
    rater = rng.integers(1, 11, n)
    category = rng.integers(1, 5, n)
    at = 1_700_000_000_000_000 + np.arange(n, dtype=np.int64) * 1000
    out = io.StringIO()
    for i in range(n):
        out.write(f"{i + 1}\t1\t{item[i]}\t{rater[i]}\t\\N\t{category[i]}\t{at[i]}\t{at[i]}\t\\N\n")
    return out.getvalue().encode()


def create_shaped(db: psycopg.Connection, table: str = "shaped") -> None:
    """A table of the labels' shape: PK and the indexes the schema needs, no checks."""
    keyed = COLUMNS.replace("id bigint", "id bigint PRIMARY KEY", 1)
    db.execute(f"CREATE TABLE {table} ({keyed})")
    db.execute(f"CREATE INDEX ON {table} (project_id, id)")
    db.execute(f"CREATE INDEX ON {table} (project_id, labeled_at)")
    db.execute(f"CREATE INDEX ON {table} (project_id, item_id, rater_id, labeled_at)")
    db.execute(
        f"CREATE UNIQUE INDEX ON {table} (project_id, client_key) WHERE client_key IS NOT NULL"
    )


def import_shaped_rows(rows: int, first_id: int, shift: int) -> Iterator[bytes]:
    """The rows the benchmark's import writes, as COPY text in chunks: ``rows // 10`` items
    (``item<n>``) each labeled by 10 raters, item by item, one second apart from 2024-01-01
    plus ``shift`` microseconds. Item ids are the names' ranks in text order, as the import
    creates items (``ORDER BY item``), so the identity index takes the same scattered inserts."""
    n_items = max(rows // 10, 1)
    names = np.array([f"item{i}" for i in range(n_items)])
    rank = np.empty(n_items, dtype=np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(1, n_items + 1)
    category = np.random.default_rng(1).integers(1, 5, rows)
    start = 1_704_067_200_000_000 + shift  # 2024-01-01T00:00:00Z in microseconds
    for low in range(0, rows, 1_000_000):
        n = np.arange(low, min(low + 1_000_000, rows), dtype=np.int64)
        at = start + n * 1_000_000
        yield "".join(
            f"{first_id + k}\t1\t{i}\t{r}\t\\N\t{c}\t{t}\t{t}\t\\N\n"
            for k, i, r, c, t in zip(
                n.tolist(),
                rank[n // 10].tolist(),
                (n % 10 + 1).tolist(),
                category[n].tolist(),
                at.tolist(),
                strict=True,
            )
        ).encode()


def copy_into_holding(db: psycopg.Connection, rows: int) -> float:
    """Seconds of PostgreSQL's COPY of ``rows`` label-shaped rows into a labels-shaped table
    already holding ``rows`` rows of the same items and raters four years earlier (the
    benchmark's second 10M import): the floor under that import."""
    create_shaped(db, "holding")
    with db.cursor().copy("COPY holding FROM STDIN") as copy:
        for chunk in import_shaped_rows(rows, 1, 0):
            copy.write(chunk)
    db.execute("VACUUM ANALYZE holding")
    db.execute("CHECKPOINT")
    later = import_shaped_rows(rows, rows + 1, FOUR_YEARS)
    chunks = list(later)  # generated before the clock starts
    start = time.perf_counter()
    with db.cursor().copy("COPY holding FROM STDIN") as copy:
        for chunk in chunks:
            copy.write(chunk)
    elapsed = time.perf_counter() - start
    db.execute("DROP TABLE holding")
    return elapsed


def best_copy(connection: psycopg.Connection, table: str, data: bytes, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        connection.execute(f"TRUNCATE {table}")
        start = time.perf_counter()
        with connection.cursor().copy(f"COPY {table} FROM STDIN") as copy:
            copy.write(data)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    name = f"auditor_floor_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        data = rows_as_copy_text(args.rows)
        url = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"CREATE TABLE bare ({COLUMNS})")
            create_shaped(db)
            bare = best_copy(db, "bare", data, args.repeat)
            shaped = best_copy(db, "shaped", data, args.repeat)
        print(f"load average {os.getloadavg()[0]:.2f}; {args.rows:,} rows")
        print(f"COPY into a bare table:                 {bare:6.2f} s")
        print(f"COPY into the labels' shape (PK + 4 indexes, no checks): {shaped:6.2f} s "
              f"= {shaped / bare:.1f}x the bare COPY")  # fmt: skip
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}"')


if __name__ == "__main__":
    main()
