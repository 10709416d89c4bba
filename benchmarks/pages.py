"""Dashboard page cost against history length and rater count (issue 22 items 1-2).

    nice .venv/bin/python benchmarks/pages.py [--snapshots 100000] [--raters 200] [--rounds 5]

In a fresh PostgreSQL database (``auditor_pages_<hex>``, dropped at the end):

1. History: two copies of one small project (4 raters and a model, synthetic labels, one real
   recompute). In the long one, the cumulative snapshot is cloned ``--snapshots - 1`` times an
   hour apart, with every metric point the charts and sparklines read (straight through the
   tables: recomputing 100k times would take hours). Prints the project page's server time
   (the read service and the rendering, as the route runs them) and bytes for 1 snapshot and
   for ``--snapshots``, alternated over ``--rounds`` rounds, their medians and ratios
   (target: at most 2x).
2. Raters: a project of 10 raters and one of ``--raters`` (items labeled by 5 raters each,
   one real recompute), the same measurements; targets: the big page under 1 MB and within
   2x the 10-rater page's server time.

The machine is shared: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
from sqlalchemy import text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.presentation.pages import Renderer
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.dashboard import project_detail
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import history_rollups, migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.services import POSTGRES_ADMIN_URL

CATEGORIES = ["normal", "benign", "malignant", "other"]
END = datetime(2026, 6, 1, 12, tzinfo=UTC)
HOUR_MICROS = 3_600_000_000


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


@contextmanager
def fresh_database() -> Iterator[str]:
    name = f"auditor_pages_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def seed(engine: object, slug: str, raters: int, items: int, per_item: int, seed: int) -> None:
    """A project of ``raters`` humans (and a model) on ``items`` items, ``per_item`` humans
    each, 10% of each rater's items seen twice; one recompute at END."""
    create_project(UnitOfWork(engine), slug, CATEGORIES, windows_days=(7,))
    rng = np.random.default_rng(seed)
    names = [f"r{i}" for i in range(1, raters + 1)]
    reliability = rng.uniform(0.6, 0.95, size=raters)
    truth = rng.choice(len(CATEGORIES), size=items, p=[0.5, 0.25, 0.15, 0.10])
    start = END - timedelta(days=5)
    rows = []
    for item in range(items):
        chosen = rng.choice(raters, size=min(per_item, raters), replace=False)
        looks = [(int(r), 0) for r in chosen]
        looks += [(int(r), 1) for r in chosen if rng.random() < 0.1]
        for r, look in looks:
            keep = rng.random() < reliability[r]
            label = truth[item] if keep else rng.integers(len(CATEGORIES))
            at = start + timedelta(seconds=float(rng.uniform(0, 4 * 86400)) + look * 3600 * 20)
            rows.append(
                {
                    "item": f"i{item}",
                    "rater": names[r],
                    "label": CATEGORIES[int(label)],
                    "session": f"{names[r]}-s",
                    "labeled_at": at,
                    "rater_kind": "human",
                }
            )
        rows.append(
            {
                "item": f"i{item}",
                "rater": "model-v1",
                "label": CATEGORIES[int(truth[item])],
                "session": "model",
                "labeled_at": start + timedelta(seconds=item),
                "rater_kind": "model",
            }
        )
    rows.sort(key=lambda row: row["labeled_at"])
    for i in range(0, len(rows), 20_000):
        ingest_labels(UnitOfWork(engine), slug, rows[i : i + 20_000], received_at=END)
    project_id = find_project_id(UnitOfWork(engine), slug)
    recompute_project(UnitOfWork(engine), project_id, now=END, force=True)


def clone_history(engine: object, slug: str, copies: int) -> None:
    """``copies`` more cumulative snapshots, an hour apart before the real one, each with the
    real one's metric points of the charted metrics (values wobbling a little)."""
    project_id = find_project_id(UnitOfWork(engine), slug)
    with engine.begin() as db:  # type: ignore[attr-defined]
        base = db.execute(
            text("SELECT id FROM snapshots WHERE project_id = :p AND scope = 'cumulative'"),
            {"p": project_id},
        ).scalar_one()
        db.execute(
            text(
                """
                CREATE TEMP TABLE clones ON COMMIT DROP AS
                WITH made AS (
                  INSERT INTO snapshots (project_id, scope, tick, computed_at, as_of,
                    window_start, window_end, watermark, project_label_count, n_labels, n_items,
                    n_raters, n_pairable_items, categories, settings, code_version, seed,
                    interval_method, interval_level, duration_ms, result)
                  SELECT project_id, scope, tick - g, computed_at - g * :hour,
                    as_of - g * :hour, window_start, window_end, watermark, project_label_count,
                    n_labels, n_items, n_raters, n_pairable_items, categories, settings,
                    code_version, seed, interval_method, interval_level, duration_ms,
                    '{}'::json
                  FROM snapshots, generate_series(1, :copies) AS g WHERE id = :base
                  RETURNING id, tick)
                SELECT id, tick FROM made
                """
            ),
            {"hour": HOUR_MICROS, "copies": copies, "base": base},
        )
        db.execute(
            text(
                """
                INSERT INTO metric_points (snapshot_id, project_id, scope, computed_at, as_of,
                  metric, subject_kind, subject_id, value, ci_low, ci_high, n, reason)
                SELECT c.id, m.project_id, m.scope, m.computed_at + (c.tick - s.tick) * :hour,
                  m.as_of + (c.tick - s.tick) * :hour, m.metric, m.subject_kind, m.subject_id,
                  m.value + w.d, m.ci_low + w.d, m.ci_high + w.d, m.n, m.reason
                FROM clones c
                CROSS JOIN snapshots s
                CROSS JOIN LATERAL (SELECT 0.02 * sin(c.tick / 50.0) AS d) w
                JOIN metric_points m ON m.snapshot_id = s.id
                WHERE s.id = :base AND m.metric IN ('kappa_s', 'rho', 'fleiss_kappa',
                  'krippendorff_alpha', 'self_agreement', 'reliability', 'random_choice',
                  's_vs_group', 's', 'kappa_va')
                """
            ),
            {"hour": HOUR_MICROS, "base": base},
        )
        # snapshots and points went straight into the tables: their rollups and counts are
        # built as the migration builds them for existing points (a recompute writes all at
        # once)
        history_rollups.rebuild(db, project_id)
        for table in ("snapshots", "metric_points", "metric_rollups"):
            db.execute(text(f"ANALYZE {table}"))


def page(engine: object, slug: str) -> tuple[float, int]:
    """The project page's server time (read + render) and bytes."""
    started = time.perf_counter()
    detail = project_detail(UnitOfWork(engine, read_only=True), slug)  # type: ignore[arg-type]
    html = RENDERER.project_page(detail)
    return time.perf_counter() - started, len(html.encode("utf-8"))


RENDERER = Renderer()


def compare(engine: object, small: str, big: str, rounds: int, label: str) -> None:
    page(engine, small), page(engine, big)  # warm: templates compiled, caches filled
    times: dict[str, list[float]] = {small: [], big: []}
    sizes: dict[str, int] = {}
    for round_ in range(rounds):
        order = (small, big) if round_ % 2 == 0 else (big, small)
        for slug in order:
            seconds, size = page(engine, slug)
            times[slug].append(seconds)
            sizes[slug] = size
    t_small, t_big = statistics.median(times[small]), statistics.median(times[big])
    print(f"{label}:")
    for slug in (small, big):
        rounded = ", ".join(f"{t:.3f}" for t in times[slug])
        print(
            f"  {slug:>12}: {statistics.median(times[slug]):.3f} s ({rounded}), {sizes[slug]:,} B"
        )
    print(
        f"  ratio {big}/{small}: time {t_big / t_small:.2f}x, bytes "
        f"{sizes[big] / sizes[small]:.2f}x   (load average {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=100_000)
    parser.add_argument("--raters", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--skip-history", action="store_true")
    parser.add_argument("--skip-raters", action="store_true")
    args = parser.parse_args()
    with fresh_database() as url:
        migrate.upgrade(url)
        engine = make_engine(url)
        try:
            if not args.skip_history:
                started = time.perf_counter()
                seed(engine, "history-1", 4, 400, 3, seed=1)
                seed(engine, "history-n", 4, 400, 3, seed=1)
                clone_history(engine, "history-n", args.snapshots - 1)
                print(f"(history seeded in {time.perf_counter() - started:.0f} s)")
                compare(
                    engine, "history-1", "history-n", args.rounds,
                    f"project page, 1 against {args.snapshots:,} cumulative snapshots",
                )  # fmt: skip
            if not args.skip_raters:
                started = time.perf_counter()
                seed(engine, "raters-10", 10, 600, 5, seed=2)
                seed(engine, f"raters-{args.raters}", args.raters, 3000, 5, seed=3)
                print(f"(raters seeded in {time.perf_counter() - started:.0f} s)")
                compare(
                    engine, "raters-10", f"raters-{args.raters}", args.rounds,
                    f"project page, 10 against {args.raters} raters",
                )  # fmt: skip
        finally:
            engine.dispose()


if __name__ == "__main__":
    main()
