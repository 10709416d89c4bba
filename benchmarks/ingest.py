"""Ingestion benchmark (issue 2, item 7). Not part of the test suite.

Generates 1M labels (100k items x 10 raters, 4 categories) as CSV, imports the file with the
service (the path of ``auditor import``) into PostgreSQL and into SQLite, and times, in the
same run, PostgreSQL's own ``COPY`` of the same file into a bare table of text columns.
Prints labels/s and the ratio to the raw COPY. With ``--rss`` it also imports a 10M-row file
in a child process (``auditor import``) twice (the second time four years later, into the
project holding the first), prints that process's peak RSS, and times the floor of the second
import: PostgreSQL's COPY of the same rows (ids resolved, no parsing, no checks) into a
labels-shaped table already holding the first 10M (``copy_floor.copy_into_holding``).

Also times, in the same database, PostgreSQL's COPY of 1M label-shaped rows into a table of
the labels' shape (``copy_floor.py``): the floor under any import.

Targets (issue 13): >= 250k labels/s into PostgreSQL and within 2x of the labels-shaped COPY;
SQLite >= 200k labels/s; a 10M file into a project holding 10M >= 200k labels/s with a peak
RSS < 500 MB.

    .venv/bin/python benchmarks/ingest.py [--rows 1000000] [--keys] [--rss] [--rss-rows N]
        [--skip-sqlite] [--lock-rows 3000000]
    .venv/bin/python benchmarks/ingest.py --realistic --rows 1000000 --rounds 3
    nice -n 10 .venv/bin/python benchmarks/ingest.py --realistic --into-holding \
        --rows 10000000 --rounds 3

``--realistic`` (issue 22 item 6) measures the import honestly against its floor: a file shaped
like a real export (items not in order, times with microseconds shuffled over 30 days, 2% of
the labels a rater's second look at an item), imported into a fresh database and COPYed, as
the rows the import writes (ids resolved, same order), into a fresh labels-shaped table,
alternating which goes first over ``--rounds`` rounds; prints each round's ratio and the
median, with the load average. Target: within 2x.

``--realistic --into-holding`` does the same for a second export into a project holding the
first (``holding_rounds``): a second file of ``--rows`` labels (own seed, times in the 30 days
after the first's, half its items stored and half new) imported by the service in a child
process (its peak RSS printed), against the COPY of its resolved rows into a labels-shaped
table holding the first file's rows; each round in a file copy of a database set up once.
Each round also prints the import's five slowest SQL statements and the rest (parse,
validate, staging); ``ingest_explain.py`` shows their plans and a cProfile of the Python side.
Target: within 2x at 10M into 10M.

Everything runs in a throwaway database (``auditor_bench_<hex>``) and a temporary directory.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psutil
import psycopg
from copy_floor import best_copy, copy_into_holding, create_shaped, rows_as_copy_text
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url

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


def realistic_rows(
    rows: int, seed: int = 7, first_item: int = 0, start_day: int = 0
) -> dict[str, np.ndarray]:
    """A real export's shape: ~``rows`` labels of rows / (RATERS * 1.02) items (``item<n>``
    from ``first_item`` on) by RATERS raters, 2% of them a second look (same item and rater,
    later), in shuffled order, times spread over 30 days from 2024-01-01 plus ``start_day``
    days. Columns: item, rater, category (indices), at (microseconds)."""
    rng = np.random.default_rng(seed)
    firsts = round(rows / 1.02)
    n_items = max(firsts // RATERS, 1)
    firsts = n_items * RATERS
    item = np.repeat(np.arange(first_item, first_item + n_items), RATERS)
    rater = np.tile(np.arange(RATERS), n_items)
    again = rng.choice(firsts, rows - firsts, replace=False) if rows > firsts else np.zeros(0, int)
    item = np.concatenate([item, item[again]])
    rater = np.concatenate([rater, rater[again]])
    span = 30 * 86_400 * 1_000_000
    start = 1_704_067_200_000_000 + start_day * 86_400 * 1_000_000  # 2024-01-01T00:00:00Z
    # distinct microseconds: no two labels share a natural identity
    at = start + rng.choice(span, item.shape[0], replace=False)
    order = rng.permutation(item.shape[0])
    return {
        "item": item[order],
        "rater": rater[order],
        "category": rng.integers(0, len(CATEGORIES), item.shape[0]),
        "at": at[order],
    }


def write_realistic(path: Path, data: dict[str, np.ndarray]) -> None:
    moments = (data["at"] // 1_000_000).astype("datetime64[s]").astype(str)
    micros = data["at"] % 1_000_000
    with path.open("w", buffering=1 << 20) as out:
        out.write("item,rater,label,labeled_at\n")
        for low in range(0, data["item"].shape[0], 200_000):  # chunks, not one string
            high = low + 200_000
            out.write(
                "".join(
                    f"item{i},rater{r},{CATEGORIES[c]},{m}.{u:06d}Z\n"
                    for i, r, c, m, u in zip(
                        data["item"][low:high].tolist(),
                        data["rater"][low:high].tolist(),
                        data["category"][low:high].tolist(),
                        moments[low:high].tolist(),
                        micros[low:high].tolist(),
                        strict=True,
                    )
                )
            )


def item_ids(items: np.ndarray, stored: int = 0) -> np.ndarray:
    """The ids the import gives the item indices ``items`` (``item<n>``) when the project
    holds ``item0`` .. ``item<stored - 1>`` (ids 1..stored, from an earlier import): a stored
    name keeps its id, new names get the next ids in text order (the import creates items
    ``ORDER BY item``); a first import (``stored`` 0) ranks all of them in text order."""
    top = int(items.max()) + 1
    ids = np.zeros(top, dtype=np.int64)
    if stored:
        old = np.arange(min(stored, top))
        ids[old] = _text_ranks(old)
    new = np.setdiff1d(np.unique(items), np.arange(stored))
    ids[new] = stored + _text_ranks(new)
    return ids[items]


def _text_ranks(indices: np.ndarray) -> np.ndarray:
    """1-based ranks of the names ``item<i>`` in text order."""
    names = np.char.add("item", indices.astype(str))
    rank = np.empty(indices.shape[0], dtype=np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(1, indices.shape[0] + 1)
    return rank


def write_copy_text(
    path: Path, data: dict[str, np.ndarray], items: np.ndarray, first_id: int = 1
) -> None:
    """The rows the import writes, as labels-shaped COPY text in file order (ids from
    ``first_id``, item ids ``items``, one per row), written to ``path`` in chunks so that
    10M rows never sit in memory as one string."""
    with path.open("wb") as out:
        for low in range(0, items.shape[0], 1_000_000):
            high = low + 1_000_000
            out.write(
                "".join(
                    f"{first_id + k}\t1\t{i}\t{r}\t\\N\t{c}\t{t}\t{t}\t\\N\n"
                    for k, i, r, c, t in zip(
                        range(low, min(high, items.shape[0])),
                        items[low:high].tolist(),
                        (data["rater"][low:high] + 1).tolist(),
                        (data["category"][low:high] + 1).tolist(),
                        data["at"][low:high].tolist(),
                        strict=True,
                    )
                ).encode()
            )


def copy_file(db: psycopg.Connection, table: str, path: Path) -> float:
    """Seconds of PostgreSQL's COPY of the COPY text in ``path`` into ``table``."""
    started = time.perf_counter()
    with db.cursor().copy(f"COPY {table} FROM STDIN") as copy, path.open("rb") as source:
        while chunk := source.read(1 << 20):
            copy.write(chunk)
    return time.perf_counter() - started


def realistic_rounds(directory: Path, rows: int, rounds: int) -> None:
    data = realistic_rows(rows)
    path = directory / "realistic.csv"
    write_realistic(path, data)
    copy_text = directory / "realistic.copy"
    write_copy_text(copy_text, data, item_ids(data["item"]))
    n = int(data["item"].shape[0])
    print(f"realistic file: {n:,} labels ({path.stat().st_size / 1e6:.0f} MB), items not in "
          "order, times shuffled over 30 days, 2% second looks")  # fmt: skip
    ratios = []
    for r in range(rounds):
        with postgres_database() as url:
            with psycopg.connect(_libpq(url), autocommit=True) as db:
                create_shaped(db)
            migrate.upgrade(url)

            def floor() -> float:
                with psycopg.connect(_libpq(url), autocommit=True) as db:
                    return copy_file(db, "shaped", copy_text)

            def service() -> float:
                seconds, inserted, _ = import_seconds(url, path)
                assert inserted == n, (inserted, n)
                return seconds

            if r % 2 == 0:  # alternated: which one runs first changes every round
                imported, copied = service(), floor()
            else:
                copied, imported = floor(), service()
        ratios.append(imported / copied)
        print(f"round {r + 1}: import {imported:6.2f} s ({n / imported:,.0f} labels/s), "
              f"labels-shaped COPY {copied:6.2f} s: {imported / copied:.2f}x; "
              f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    _print_median(ratios)


def _print_median(ratios: list[float]) -> None:
    print(f"median import / labels-shaped COPY over {len(ratios)} rounds: "
          f"{float(np.median(ratios)):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}) "
          "[target: within 2x]")  # fmt: skip


def holding_rounds(directory: Path, rows: int, rounds: int) -> None:
    """``--realistic --into-holding``: a second export into a project holding the first.

    The first file is ``realistic_rows(rows)``; the second, a later export of the same
    project, has its own seed, its times in the 30 days after the first's (so none repeats a
    stored label, and the import's stored-repeat probe is bounded away, as for any export of
    newer labels) and its items shifted by half the first's item count: half of them are
    items the project holds (a second round of labels on them), half are new. Set up once, not
    timed: the first file imported by the service into an empty project, the same rows COPYed
    into a labels-shaped table ``holding``, both VACUUM ANALYZEd (autovacuum is off on the
    test server). Each round runs in a file copy of that database (``CREATE DATABASE ...
    TEMPLATE``: at 10M a round saves the set-up's import and COPY, about 15 min at load 6),
    where, after a CHECKPOINT each and alternately first, the service imports the second file
    (in a child process, whose peak RSS is printed) and PostgreSQL COPYs its rows, ids
    resolved as the import writes them, into ``holding``."""
    first = realistic_rows(rows, seed=7)
    stored_items = int(first["item"].max()) + 1
    second = realistic_rows(rows, seed=8, first_item=stored_items // 2, start_day=30)
    paths = {name: directory / f"{name}.csv" for name in ("first", "second")}
    copies = {name: directory / f"{name}.copy" for name in ("first", "second")}
    write_realistic(paths["first"], first)
    write_copy_text(copies["first"], first, item_ids(first["item"]))
    n_first = int(first["item"].shape[0])
    write_realistic(paths["second"], second)
    write_copy_text(
        copies["second"], second, item_ids(second["item"], stored_items), first_id=n_first + 1
    )
    n = int(second["item"].shape[0])
    new_items = int((np.unique(second["item"]) >= stored_items).sum())
    print(f"realistic files: {n_first:,} labels, then {n:,} labels 30 days later "
          f"({paths['second'].stat().st_size / 1e6:.0f} MB) on {new_items:,} new items and "
          f"{stored_items - stored_items // 2:,} of the {stored_items:,} stored; items not in "
          "order, times shuffled, 2% second looks")  # fmt: skip
    del first, second
    spawn = multiprocessing.get_context("spawn")
    ratios = []
    with postgres_database() as seeded_url:  # set-up once, copied for each round
        seeded, inserted, _ = import_seconds(seeded_url, paths["first"])
        assert inserted == n_first, (inserted, n_first)
        with psycopg.connect(_libpq(seeded_url), autocommit=True) as db:
            create_shaped(db, "holding")
            held = copy_file(db, "holding", copies["first"])
            db.execute("VACUUM ANALYZE labels")
            db.execute("VACUUM ANALYZE holding")
        print(f"set-up: first file imported in {seeded:.1f} s ({n_first / seeded:,.0f} labels/s, "
              f"into an empty project), COPYed into the labels-shaped table in {held:.1f} s; "
              f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
        for r in range(rounds):
            with (
                postgres_database(template=seeded_url) as url,
                psycopg.connect(_libpq(url), autocommit=True) as db,
            ):

                def floor() -> float:
                    db.execute("CHECKPOINT")
                    return copy_file(db, "holding", copies["second"])

                def service() -> tuple[float, int, list[tuple[float, str]]]:
                    db.execute("CHECKPOINT")
                    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                        seconds, inserted, peak, top = pool.submit(
                            child_import, url, paths["second"]
                        ).result()
                    assert inserted == n, (inserted, n)
                    return seconds, peak, top

                if r % 2 == 0:  # alternated: which one runs first changes every round
                    (imported, peak, top), copied = service(), floor()
                else:
                    copied, (imported, peak, top) = floor(), service()
            ratios.append(imported / copied)
            print(f"round {r + 1}: import {imported:6.1f} s ({n / imported:,.0f} labels/s, peak "
                  f"RSS {peak / 1e6:.0f} MB), COPY into the labels-shaped table holding the "
                  f"first {copied:6.1f} s: {imported / copied:.2f}x; load average "
                  f"{os.getloadavg()[0]:.2f}")  # fmt: skip
            for seconds, statement in top:
                print(f"    {seconds:6.1f} s  {statement}")
            print(f"    {imported - sum(s for s, _ in top):6.1f} s  the rest (parse, validate, "
                  "stage: the staging COPY is not a statement, other statements)")  # fmt: skip
    _print_median(ratios)


def child_import(url: str, path: Path) -> tuple[float, int, int, list[tuple[float, str]]]:
    """``import_into_seconds`` in a process of its own, with that process's peak RSS: VmHWM,
    not ``getrusage``'s ru_maxrss, which Linux carries over from the forked copy of the parent
    through exec (it read 2,509 MB at 10M: the parent's peak while generating the files)."""
    seconds, inserted, top = import_into_seconds(url, path)
    status = Path("/proc/self/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
    return seconds, inserted, peak * 1024, top


def import_into_seconds(url: str, path: Path) -> tuple[float, int, list[tuple[float, str]]]:
    """Seconds and labels of an import of ``path`` into the project ``bench`` (which exists),
    and the import's five slowest SQL statements (seconds, start of the text)."""
    engine = make_engine(url)
    spent: dict[str, float] = {}

    def before(connection: Connection, *_: object) -> None:
        connection.info["statement_started"] = time.perf_counter()

    def after(connection: Connection, _cursor: object, statement: str, *_: object) -> None:
        key = " ".join(statement.split())[:100]
        started = connection.info.pop("statement_started")
        spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        started = time.perf_counter()
        result = import_batches(UnitOfWork(engine), "bench", LabelFileReader(path, BATCH))
        elapsed = time.perf_counter() - started
    finally:
        engine.dispose()
    if result.rejected:
        raise SystemExit(f"benchmark file rejected: {result.errors[:3]}")
    return elapsed, result.inserted, sorted(((s, k) for k, s in spent.items()), reverse=True)[:5]


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def postgres_database(template: str | None = None) -> Iterator[str]:
    """A throwaway database, empty or a file copy of the database of the URL ``template``
    (which no one may be connected to)."""
    name = f"auditor_bench_{uuid.uuid4().hex[:8]}"
    copied = f' TEMPLATE "{make_url(template).database}" STRATEGY FILE_COPY' if template else ""
    with psycopg.connect(_libpq(ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"{copied}')
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


class WriteLockClock:
    """Seconds from each ``BEGIN IMMEDIATE`` (SQLite's write lock taken) to its COMMIT or
    ROLLBACK, on an engine: how long other writers would wait."""

    def __init__(self, engine: Engine) -> None:
        self.held: list[float] = []
        self._started: dict[int, float] = {}
        event.listen(engine, "begin", self._begin)
        event.listen(engine, "commit", self._end)
        event.listen(engine, "rollback", self._end)

    def _begin(self, connection: Connection) -> None:
        if connection.get_execution_options().get("sqlite_begin") == "IMMEDIATE":
            self._started[id(connection)] = time.perf_counter()

    def _end(self, connection: Connection) -> None:
        started = self._started.pop(id(connection), None)
        if started is not None:
            self.held.append(time.perf_counter() - started)


def import_seconds(url: str, path: Path, into: Path | None = None) -> tuple[float, int, float]:
    """Seconds and labels of an import of ``path`` (after one of ``into`` when given, so the
    project already holds its labels), and the longest write-lock hold (SQLite) of it."""
    migrate.upgrade(url)
    engine = make_engine(url)
    try:
        create_project(UnitOfWork(engine), "bench", CATEGORIES)
        if into is not None:
            import_batches(UnitOfWork(engine), "bench", LabelFileReader(into, BATCH))
        clock = WriteLockClock(engine)
        started = time.perf_counter()
        result = import_batches(UnitOfWork(engine), "bench", LabelFileReader(path, BATCH))
        elapsed = time.perf_counter() - started
    finally:
        engine.dispose()
    if result.rejected:
        raise SystemExit(f"benchmark file rejected: {result.errors[:3]}")
    return elapsed, result.inserted, max(clock.held, default=0.0)


def peak_rss_of_import(url: str, path: Path, imports: int) -> tuple[list[float], int]:
    """Seconds of each of ``imports`` runs of ``auditor import`` of ``path`` (with
    ``--again``: each run after the first goes into a project holding the earlier runs'
    labels; the file's times are shifted per run so that none is a duplicate), and the peak
    RSS (bytes) of the child processes, sampled with psutil."""
    migrate.upgrade(url)
    engine = make_engine(url)
    create_project(UnitOfWork(engine), "rss", CATEGORIES)
    engine.dispose()
    env = {**os.environ, "AUDITOR_DATABASE_URL": url}
    command = [sys.executable, "-c", "from auditor.cli import main; main()", "import", "rss"]
    seconds: list[float] = []
    peak = 0
    for run in range(imports):
        if run:  # the same rows four years later: new natural identities
            shift_years(path)
        started = time.perf_counter()
        child = psutil.Popen([*command, str(path), "--again"], env=env, stdout=subprocess.DEVNULL)
        while child.poll() is None:
            try:
                peak = max(peak, child.memory_info().rss)
            except psutil.NoSuchProcess:
                break
            time.sleep(0.2)
        if child.returncode:
            raise SystemExit(f"auditor import failed ({child.returncode})")
        seconds.append(time.perf_counter() - started)
    return seconds, peak


def shift_years(path: Path) -> None:
    """Rewrite the file with every labeled_at four years later (2024 to 2028: both leap
    years, so February 29 stays a date)."""
    shifted = path.with_suffix(".next")
    with path.open("rb") as source, shifted.open("wb") as out:
        while chunk := source.read(1 << 24) + source.readline():  # whole lines
            out.write(chunk.replace(b",2024-", b",2028-"))
    shifted.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", action="store_true", help="add a client key column")
    parser.add_argument("--rss", action="store_true", help="also import 10M rows (slow)")
    parser.add_argument("--rss-rows", type=int, default=10_000_000)
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument(
        "--lock-rows",
        type=int,
        default=0,
        help="also import this many rows into SQLite, timing the write lock (issue 11: 3000000)",
    )
    parser.add_argument(
        "--realistic",
        action="store_true",
        help="only the alternated rounds of import vs labels-shaped COPY on a realistic file",
    )
    parser.add_argument(
        "--into-holding",
        action="store_true",
        help="with --realistic: a second realistic file into a project holding the first",
    )
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if options.realistic:
        rounds = holding_rounds if options.into_holding else realistic_rounds
        with tempfile.TemporaryDirectory(prefix="auditor-bench-") as directory:
            rounds(Path(directory), options.rows, options.rounds)
        return
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
            pg_time, inserted, _ = import_seconds(url, path)
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
            sqlite_url = f"sqlite:///{Path(directory) / 'bench.db'}"
            sqlite_time, _, held = import_seconds(sqlite_url, path)
            print(f"SQLite import (service):               {sqlite_time:6.2f} s "
                  f"({options.rows / sqlite_time:,.0f} labels/s), "
                  f"{sqlite_time / copy_time:.1f}x the PostgreSQL raw COPY, write lock held "
                  f"{held:.2f} s [target: >= 200,000 labels/s]")  # fmt: skip
        if options.lock_rows:
            big = Path(directory) / "lock.csv"
            generate(big, options.lock_rows, options.keys)
            seconds, _, held = import_seconds(f"sqlite:///{Path(directory) / 'lock.db'}", big)
            big.unlink()
            print(f"SQLite import of {options.lock_rows:,} rows: {seconds:.2f} s "
                  f"({options.lock_rows / seconds:,.0f} labels/s), write lock held {held:.2f} s "
                  "[target (issue 11): <= 15 s for 3M rows]")  # fmt: skip

        if options.rss:
            path.unlink()
            generate(path, options.rss_rows, options.keys)
            with postgres_database() as url:
                runs, peak = peak_rss_of_import(url, path, 2)
                with psycopg.connect(_libpq(url), autocommit=True) as db:
                    held = copy_into_holding(db, options.rss_rows)
            rows = options.rss_rows
            print(f"`auditor import` of {rows:,} rows into PostgreSQL: first "
                  f"{runs[0]:.1f} s ({rows / runs[0]:,.0f} labels/s), into "
                  f"the project holding them {runs[1]:.1f} s "
                  f"({rows / runs[1]:,.0f} labels/s), peak RSS "
                  f"{peak / 1e6:.0f} MB [targets: >= 200,000 labels/s, < 500 MB]")  # fmt: skip
            print(f"PostgreSQL COPY of the same {rows:,} rows into a labels-shaped table "
                  f"holding the first {rows:,}: {held:.1f} s ({rows / held:,.0f} rows/s) "
                  f"[the floor]; the import is {runs[1] / held:.1f}x it")  # fmt: skip


if __name__ == "__main__":
    main()
