"""Benchmark of the recompute (issue 4 item 8): load, compute, write, against peers.

For projects of 1M and 10M labels in PostgreSQL (10 raters, 4 categories, 20% missing, 2%
repeats, over 30 days), each measured in a fresh child process so peak RSS is its own:

- load: database -> LabelArrays (ADBC -> Arrow -> NumPy), against a bare binary
  ``COPY (SELECT the same columns) TO STDOUT`` of the same rows in the same process, and (1M
  only) against fetchall + ``np.array``;
- stats alone on the same arrays (cumulative and 7-day window), the write, and the whole
  recompute end to end (dirty check, load, both scopes, write) with its peak RSS;
- SQLite at 1M: group_concat load against fetchall + np.array and against ADBC SQLite
  (the latter only in a process where nothing else has the file open; see label_loader.py);
- sustained ingest (``--sustained``): a Celery worker and beat (scan every 2 s) while
  1,000 labels/s arrive through ``ingest_labels``; prints the worst delay from a batch's commit
  to the first snapshot that includes it.

- kept statistics (``--incremental SIZES``, issue 22): the whole recompute (cumulative and
  7-day window served from the kept statistics) after 1,000 new labels on existing items,
  alternated over the sizes for ``--rounds`` rounds (CPU, wall, peak RSS above the process
  floor), the full pass it replaces, and the rebuild from every label against today's load +
  statistics.

Run:  .venv/bin/python benchmarks/recompute.py [--sizes 1000000,10000000] [--sustained 30]
      .venv/bin/python benchmarks/recompute.py --incremental 100000,1000000,3000000 --rounds 5
Needs PostgreSQL at AUDITOR_TEST_POSTGRES_URL (default postgres@127.0.0.1:5432) and, for
--sustained, Redis at 127.0.0.1:6379 (DB 13, a key prefix of its own).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
from sqlalchemy import text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.domain import ProjectSettings
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.stats import compute_measures
from auditor.stats.synthetic import items_for, synthetic_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.label_loader import load_project_labels
from auditor.storage.unit_of_work import UnitOfWork

ADMIN = os.environ.get(
    "AUDITOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
RATERS = 10


def libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def peak_rss_mb() -> float:
    """This process's own peak RSS (VmHWM). ru_maxrss is not used: over fork + exec it carries
    the parent's RSS at the fork (here the parent holds the generated project)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- data set-up (not timed) -----------------------------------------------------------


def copy_binary(cursor: psycopg.Cursor, table: str, columns: list[tuple[str, str, np.ndarray]]):
    """COPY FROM STDIN (FORMAT binary) built with a NumPy structured array: no row loop."""
    n = columns[0][2].shape[0]
    fields = [("count", ">i2")]
    for name, code, _ in columns:
        fields += [(f"{name}_len", ">i4"), (name, code)]
    rows = np.empty(n, dtype=fields)
    rows["count"] = len(columns)
    for name, code, values in columns:
        rows[f"{name}_len"] = np.dtype(code).itemsize
        rows[name] = values
    header = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
    names = ", ".join(name for name, _, _ in columns)
    with cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT binary)") as copy:
        copy.write(header)
        step = 1_000_000
        for start in range(0, n, step):
            copy.write(rows[start : start + step].tobytes())
        copy.write((-1).to_bytes(2, "big", signed=True))


def make_project(url: str, slug: str, n_labels: int, seed: int = 1) -> int:
    labels = synthetic_project(items_for(n_labels, RATERS, 0.2, 0.02), RATERS, seed=seed)
    engine = make_engine(url)
    create_project(UnitOfWork(engine), slug, [f"c{k}" for k in range(4)])
    project_id = find_project_id(UnitOfWork(engine), slug)
    with engine.connect() as c:
        category_ids = np.array(
            c.execute(
                text("SELECT id FROM categories WHERE project_id = :p ORDER BY position"),
                {"p": project_id},
            )
            .scalars()
            .all()
        )
    engine.dispose()
    n_items = int(labels.item.max()) + 1
    # Labels land in the last 30 days before now, so the 7-day window holds about a quarter.
    shift = int(datetime.now(UTC).timestamp() * 1e6) - int(labels.order.max()) - 1
    with psycopg.connect(libpq(url), autocommit=False) as conn, conn.cursor() as cur:
        cur.execute("SET session_replication_role = replica")  # bulk load: skip FK triggers
        item_base = int(cur.execute("SELECT coalesce(max(id), 0) FROM items").fetchone()[0]) + 1
        rater_base = int(cur.execute("SELECT coalesce(max(id), 0) FROM raters").fetchone()[0]) + 1
        for r in range(labels.n_raters):
            cur.execute(
                "INSERT INTO raters (id, project_id, external_id, kind) VALUES (%s, %s, %s, %s)",
                (
                    rater_base + r,
                    project_id,
                    f"r{r}",
                    "model" if labels.rater_is_model[r] else "human",
                ),
            )
        with cur.copy("COPY items (id, project_id, external_id) FROM STDIN") as copy:
            for start in range(0, n_items, 200_000):
                stop = min(n_items, start + 200_000)
                copy.write(
                    "".join(f"{item_base + i}\t{project_id}\ti{i}\n" for i in range(start, stop))
                )
        now_us = int(datetime.now(UTC).timestamp() * 1e6)
        copy_binary(
            cur,
            "labels",
            [
                ("project_id", ">i4", np.full(labels.n_labels, project_id)),
                ("item_id", ">i8", labels.item + item_base),
                ("rater_id", ">i4", labels.rater + rater_base),
                ("category_id", ">i4", category_ids[labels.category]),
                ("labeled_at", ">i8", labels.order + shift),
                ("received_at", ">i8", np.full(labels.n_labels, now_us)),
            ],
        )
        for table in ("items", "raters"):
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT max(id) FROM {table}))"
            )
        conn.commit()
        cur.execute("ANALYZE labels")
    return project_id


# --- measurements, each in a child process ---------------------------------------------


def child_parts(url: str, project_id: int, with_rows: bool) -> dict:
    engine = make_engine(url)
    out: dict = {}
    columns = "id, item_id, rater_id, category_id, labeled_at"
    with psycopg.connect(libpq(url)) as conn, conn.cursor() as cur:
        started = time.perf_counter()
        size = 0
        query = (
            f"COPY (SELECT {columns} FROM labels WHERE project_id = {project_id}) "
            "TO STDOUT (FORMAT binary)"
        )
        with cur.copy(query) as copy:
            for block in copy:
                size += len(block)
        out["copy_s"] = time.perf_counter() - started
        out["copy_mb"] = size / 1e6
    started = time.perf_counter()
    loaded = load_project_labels(engine, project_id)
    out["load_s"] = time.perf_counter() - started
    out["rows"] = loaded.count
    if with_rows:
        started = time.perf_counter()
        load_project_labels(engine, project_id, method="rows")
        out["rows_load_s"] = time.perf_counter() - started
    settings = ProjectSettings()
    from auditor.snapshots.scopes import parse_scope, window_at
    from auditor.snapshots.subset import subset_labels, window_mask

    started = time.perf_counter()
    compute_measures(loaded.labels, settings)
    window = window_at(parse_scope("7d"), datetime.now(UTC))
    compute_measures(
        subset_labels(loaded.labels, window_mask(loaded.labels.order, window)), settings
    )
    out["stats_s"] = time.perf_counter() - started
    engine.dispose()
    return out


def child_recompute(url: str, project_id: int) -> dict:
    from auditor.services.recompute.recompute import scan_dirty_projects

    engine = make_engine(url)
    floor = peak_rss_mb()
    started = time.perf_counter()
    dirty = scan_dirty_projects(UnitOfWork(engine))
    scan_s = time.perf_counter() - started
    del dirty  # a project whose tick is taken is not dirty to the scan: recomputed anyway
    started, cpu = time.perf_counter(), time.process_time()
    result = recompute_project(UnitOfWork(engine), project_id)
    total = time.perf_counter() - started
    cpu = time.process_time() - cpu
    engine.dispose()
    assert result.status == "written", result.status
    sources = {
        w.scope: (w.rendered.get("source") or {}).get("statistics", "labels")
        for w in result.written
    }
    return {
        "cpu_s": cpu,
        "floor_rss_mb": floor,
        "sources": sources,
        "total_s": total,
        "scan_s": scan_s,
        "load_s": result.load_seconds,
        "compute_s": result.compute_seconds,
        "write_s": result.write_seconds,
        "peak_rss_mb": peak_rss_mb(),
        "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def child_kept(url: str, project_id: int, rebuild: bool) -> dict:
    """One kept-statistics update (or a rebuild from every label) in a fresh process: CPU,
    wall time and peak RSS (the import of the package alone is the floor)."""
    from auditor.services.recompute.kept import rebuild_kept, update_kept

    engine = make_engine(url)
    floor = peak_rss_mb()
    cpu, wall = time.process_time(), time.perf_counter()
    if rebuild:
        result = rebuild_kept(UnitOfWork(engine), project_id)
    else:
        result = update_kept(UnitOfWork(engine), project_id)
    out = {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "status": result.status,
        "new_labels": result.new_labels,
        "items": result.items,
        "floor_rss_mb": floor,
        "peak_rss_mb": peak_rss_mb(),
    }
    engine.dispose()
    return out


def add_labels_on_existing_items(url: str, project_id: int, n: int, seed: int) -> None:
    """``n`` new labels (random raters and categories, labeled now) on existing items."""
    rng = np.random.default_rng(seed)
    with psycopg.connect(libpq(url), autocommit=False) as conn, conn.cursor() as cur:
        low, high = cur.execute(
            "SELECT min(id), max(id) FROM items WHERE project_id = %s", (project_id,)
        ).fetchone()
        raters = [
            r[0]
            for r in cur.execute(
                "SELECT id FROM raters WHERE project_id = %s", (project_id,)
            ).fetchall()
        ]
        categories = [
            c[0]
            for c in cur.execute(
                "SELECT id FROM categories WHERE project_id = %s", (project_id,)
            ).fetchall()
        ]
        now_us = int(datetime.now(UTC).timestamp() * 1e6)
        cur.execute("SET session_replication_role = replica")
        copy_binary(
            cur,
            "labels",
            [
                ("project_id", ">i4", np.full(n, project_id)),
                ("item_id", ">i8", rng.integers(low, high + 1, n)),
                ("rater_id", ">i4", rng.choice(raters, n)),
                ("category_id", ">i4", rng.choice(categories, n)),
                ("labeled_at", ">i8", now_us + np.arange(n)),
                ("received_at", ">i8", np.full(n, now_us)),
            ],
        )
        conn.commit()


def incremental(url: str, sizes: list[int], rounds: int) -> None:
    """Issue 22 item 4: the recompute after 1,000 new labels on existing items, served from
    the kept statistics (the cumulative scope and the 7-day window), alternated over project
    sizes; and the rebuild of the kept state against today's load + statistics.

    Every size takes the kept path (``AUDITOR_KEPT_SNAPSHOT_LABELS=0``; the default serves
    projects from 250,000 labels on) and no full pass is due during the rounds
    (``AUDITOR_KEPT_FULL_PASS_SECONDS``): each size's first recompute is its full pass."""
    os.environ["AUDITOR_KEPT_SNAPSHOT_LABELS"] = "0"
    os.environ["AUDITOR_KEPT_FULL_PASS_SECONDS"] = "1e9"
    projects = {}
    for n in sizes:
        started = time.perf_counter()
        projects[n] = make_project(url, f"k{n}", n, seed=n % 997)
        print(f"set-up {n:,} labels: {time.perf_counter() - started:.0f} s (not timed)")
    for n in sizes:
        rebuilt = run_child("kept", url, str(projects[n]), "1")
        parts = run_child("parts", url, str(projects[n]), "0")
        print(
            f"{n:>12,} labels: rebuild of the kept statistics {rebuilt['wall_s']:6.2f} s "
            f"(CPU {rebuilt['cpu_s']:.2f} s, peak RSS {rebuilt['peak_rss_mb']:.0f} MB); today's "
            f"load + statistics (cumulative + 7d) {parts['load_s'] + parts['stats_s']:6.2f} s: "
            f"{rebuilt['wall_s'] / (parts['load_s'] + parts['stats_s']):.2f}x"
        )
        full = run_child("recompute", url, str(projects[n]))
        print(
            f"{n:>12,} labels: full pass (every label) {full['total_s']:6.2f} s, CPU "
            f"{full['cpu_s']:.2f} s, peak RSS {full['peak_rss_mb']:.0f} MB, {full['sources']}"
        )
        add_labels_on_existing_items(url, projects[n], 10, seed=99)
        warm = run_child("recompute", url, str(projects[n]))  # the window's state is built
        print(f"{n:>12,} labels: first kept recompute {warm['total_s']:6.2f} s {warm['sources']}")
    results: dict[int, list[dict]] = {n: [] for n in sizes}
    for r in range(rounds):
        order = sizes if r % 2 == 0 else list(reversed(sizes))  # alternated
        for n in order:
            add_labels_on_existing_items(url, projects[n], 1000, seed=r)
            out = run_child("recompute", url, str(projects[n]))
            assert set(out["sources"].values()) == {"kept"}, out["sources"]
            results[n].append(out)
        print(
            f"round {r + 1}: load average {os.getloadavg()[0]:.2f}; "
            + ", ".join(
                f"{n:,}: CPU {results[n][-1]['cpu_s']:.3f} s wall {results[n][-1]['total_s']:.3f} s"
                for n in sizes
            )
        )
    smallest = sizes[0]
    base_cpu = float(np.median([o["cpu_s"] for o in results[smallest]]))
    base_wall = float(np.median([o["total_s"] for o in results[smallest]]))
    print(f"recompute after 1,000 new labels on existing items, median of {rounds} rounds:")
    for n in sizes:
        cpu = float(np.median([o["cpu_s"] for o in results[n]]))
        wall = float(np.median([o["total_s"] for o in results[n]]))
        rss = max(o["peak_rss_mb"] - o["floor_rss_mb"] for o in results[n])
        floor = float(np.median([o["floor_rss_mb"] for o in results[n]]))
        print(
            f"  {n:>12,} labels: CPU {cpu:.3f} s ({cpu / base_cpu:.2f}x {smallest:,}), wall "
            f"{wall:.3f} s ({wall / base_wall:.2f}x), peak RSS above the process floor "
            f"({floor:.0f} MB) {rss:.1f} MB  (targets: within 2x, < 1 s CPU)"
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def run_child(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- SQLite at 1M ------------------------------------------------------------------------


def sqlite_comparison(tmp: Path, n_labels: int) -> None:
    import sqlite3

    url = f"sqlite:///{tmp / 'bench.db'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    create_project(UnitOfWork(engine), "s", ["c0", "c1", "c2", "c3"])
    engine.dispose()
    labels = synthetic_project(items_for(n_labels, RATERS, 0.2, 0.02), RATERS, seed=2)
    db = sqlite3.connect(tmp / "bench.db")
    db.execute("PRAGMA foreign_keys=OFF")
    db.executemany(
        "INSERT INTO raters (id, project_id, external_id, kind) VALUES (?,1,?,'human')",
        [(r + 1, f"r{r}") for r in range(labels.n_raters)],
    )
    n_items = int(labels.item.max()) + 1
    db.executemany(
        "INSERT INTO items (id, project_id, external_id) VALUES (?,1,?)",
        [(i + 1, f"i{i}") for i in range(n_items)],
    )
    db.executemany(
        "INSERT INTO labels (project_id, item_id, rater_id, category_id, labeled_at, received_at)"
        " VALUES (1,?,?,?,?,0)",
        zip(
            (labels.item + 1).tolist(),
            (labels.rater + 1).tolist(),
            (labels.category + 1).tolist(),
            labels.order.tolist(),
            strict=True,
        ),
    )
    db.commit()
    db.close()
    parts = run_child("sqlite", url, "1")
    print(
        f"SQLite {n_labels:,} labels: group_concat load {parts['load_s']:.2f} s, "
        f"fetchall+np.array {parts['rows_load_s']:.2f} s "
        f"({parts['rows_load_s'] / parts['load_s']:.1f}x slower), ADBC SQLite "
        f"{parts['adbc_s']:.2f} s (not used: second SQLite library in the process)"
    )


def child_sqlite(url: str, project_id: int) -> dict:
    engine = make_engine(url)
    out = {}
    started = time.perf_counter()
    load_project_labels(engine, project_id)
    out["load_s"] = time.perf_counter() - started
    started = time.perf_counter()
    load_project_labels(engine, project_id, method="rows")
    out["rows_load_s"] = time.perf_counter() - started
    engine.dispose()
    import adbc_driver_sqlite.dbapi as adbc

    started = time.perf_counter()
    with adbc.connect(make_url(url).database) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT id, item_id, rater_id, category_id, labeled_at FROM labels "
            f"WHERE project_id = {project_id}"
        )
        table = cur.fetch_arrow_table()
        [table.column(i).to_numpy() for i in range(5)]
    out["adbc_s"] = time.perf_counter() - started
    return out


# --- sustained ingest --------------------------------------------------------------------


def sustained(url: str, seconds: float, base_labels: int) -> None:
    import redis

    from auditor.services.ingest.labels import ingest_labels

    scan = 2.0
    project_id = make_project(url, "live", base_labels, seed=5)
    engine = make_engine(url)
    with engine.begin() as c:
        c.execute(
            text("UPDATE projects SET recompute_interval_seconds = 2 WHERE id = :p"),
            {"p": project_id},
        )
    prefix = f"auditor-bench-{uuid.uuid4().hex[:8]}:"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
    env.update(
        AUDITOR_DATABASE_URL=url,
        AUDITOR_BROKER_URL="redis://127.0.0.1:6379/13",
        AUDITOR_BROKER_KEY_PREFIX=prefix,
        AUDITOR_SCAN_INTERVAL_SECONDS=str(scan),
    )
    logs = Path(f"/tmp/{prefix.rstrip(':')}")
    logs.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "workers", *args],
            env=env,
            stdout=(logs / f"{name}.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        for name, args in (
            ("worker", ["worker", "--concurrency", "1", "--loglevel", "INFO"]),
            ("beat", ["beat", "--schedule", str(logs / "schedule"), "--loglevel", "INFO"]),
        )
    ]
    uow = UnitOfWork(engine)
    pending: list[tuple[int, float]] = []
    delays: list[float] = []
    try:
        time.sleep(6)  # processes start
        start = time.monotonic()
        batch = 0
        while time.monotonic() - start < seconds:
            tick_start = time.monotonic()
            rows = [
                {"item": f"live{batch}-{i}", "rater": f"r{i % RATERS}", "label": f"c{i % 4}"}
                for i in range(100)
            ]
            result = ingest_labels(uow, "live", rows)
            pending.append((int(result.max_label_id), time.monotonic()))
            batch += 1
            with engine.connect() as c:
                seen = c.execute(
                    text(
                        "SELECT coalesce(max(watermark), 0) FROM snapshots "
                        "WHERE project_id = :p AND scope = 'cumulative'"
                    ),
                    {"p": project_id},
                ).scalar_one()
            now = time.monotonic()
            delays += [now - t for w, t in pending if w <= seen]
            pending = [(w, t) for w, t in pending if w > seen]
            time.sleep(max(0.0, 0.1 - (time.monotonic() - tick_start)))
        deadline = time.monotonic() + 4 * scan
        while pending and time.monotonic() < deadline:
            with engine.connect() as c:
                seen = c.execute(
                    text(
                        "SELECT coalesce(max(watermark), 0) FROM snapshots "
                        "WHERE project_id = :p AND scope = 'cumulative'"
                    ),
                    {"p": project_id},
                ).scalar_one()
            now = time.monotonic()
            delays += [now - t for w, t in pending if w <= seen]
            pending = [(w, t) for w, t in pending if w > seen]
            time.sleep(0.05)
        rate = batch * 100 / seconds
        print(
            f"sustained ingest {rate:,.0f} labels/s for {seconds:.0f} s on a {base_labels:,}-label "
            f"project, scan every {scan:g} s: commit -> snapshot worst {max(delays):.2f} s, "
            f"median {np.median(delays):.2f} s, {len(pending)} batches never covered "
            f"(target: worst <= {2 * scan:g} s)"
        )
    finally:
        for p in procs:
            os.killpg(p.pid, 9)
            p.wait()
        client = redis.Redis(host="127.0.0.1", port=6379, db=13)
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
        engine.dispose()


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        kind, url, project = sys.argv[2], sys.argv[3], int(sys.argv[4])
        if kind == "parts":
            out = child_parts(url, project, with_rows=sys.argv[5] == "1")
        elif kind == "sqlite":
            out = child_sqlite(url, project)
        elif kind == "kept":
            out = child_kept(url, project, rebuild=sys.argv[5] == "1")
        else:
            out = child_recompute(url, project)
        print(json.dumps(out))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--sustained", type=float, default=0.0, help="seconds; 0 skips")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument(
        "--incremental",
        default="",
        help="sizes for the kept-statistics update (e.g. 100000,1000000,3000000); "
        "runs only that measurement",
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")
    name = f"auditor_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq(ADMIN), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(ADMIN).set(database=name).render_as_string(hide_password=False)
    try:
        migrate.upgrade(url)
        if args.incremental:
            incremental(url, [int(s) for s in args.incremental.split(",") if s], args.rounds)
            return
        for n in [int(s) for s in args.sizes.split(",") if s]:
            started = time.perf_counter()
            project_id = make_project(url, f"p{n}", n)
            setup = time.perf_counter() - started
            parts = run_child("parts", url, str(project_id), "1" if n <= 1_000_000 else "0")
            whole = run_child("recompute", url, str(project_id))
            rows = parts["rows"]
            print(f"\n{rows:,} labels in PostgreSQL (set-up {setup:.0f} s, not timed)")
            print(
                f"  bare COPY TO (binary)     {parts['copy_s']:6.2f} s  ({parts['copy_mb']:.0f} MB)"
            )
            print(
                f"  load -> LabelArrays       {parts['load_s']:6.2f} s  "
                f"{rows / parts['load_s'] / 1e6:.1f} M rows/s, "
                f"{parts['load_s'] / parts['copy_s']:.2f}x COPY "
                "(target <= 3x)"
            )
            if "rows_load_s" in parts:
                print(
                    f"  fetchall + np.array       {parts['rows_load_s']:6.2f} s  "
                    f"({parts['rows_load_s'] / parts['load_s']:.1f}x the load)"
                )
            print(f"  stats alone (cum + 7d)    {parts['stats_s']:6.2f} s")
            print(f"  scan (dirty check, all projects) {whole['scan_s']:6.2f} s")
            print(
                f"  recompute end to end      {whole['total_s']:6.2f} s  "
                f"(load {whole['load_s']:.2f}, "
                f"compute {whole['compute_s']:.2f}, write {whole['write_s']:.3f}); "
                f"{whole['total_s'] / parts['stats_s']:.2f}x stats alone; peak RSS "
                f"{whole['peak_rss_mb']:.0f} MB (VmHWM; ru_maxrss {whole['ru_maxrss_mb']:.0f} MB) "
                "(targets at 10M: <= 15 s, <= 2048 MB)"
            )
        if not args.skip_sqlite:
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                sqlite_comparison(Path(tmp), 1_000_000)
        if args.sustained > 0:
            sustained(url, args.sustained, 100_000)
    finally:
        with psycopg.connect(libpq(ADMIN), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
