"""Benchmark of ``auditor label-studio sync`` against its peer, ``auditor import`` of the same
Label Studio export (issue 28).

A synthetic export of TASKS tasks, 4 annotations each (5% edited after creation, 2% cancelled)
and a prediction of one model version on every task. On a fresh database per round, each on
SQLite and PostgreSQL, alternated over ROUNDS rounds:

- first: ``import`` (the staged bulk path: adds what is missing) against the first ``sync``
  (compares every annotation with what is stored, writes the labels, remembers versions and
  tasks);
- again: the same file imported again (every row a duplicate) against a second sync (nothing
  to change: the steady state of a scheduled sync);
- the webhook's rate: ANNOTATION_CREATED events one by one through ``receive_event``.

Prints the median of each, the ratios, and the load average (the machine is shared).

Run:  .venv/bin/python benchmarks/label_studio_sync.py [--tasks 5000] [--rounds 3]
Needs PostgreSQL at AUDITOR_TEST_POSTGRES_URL (default postgres@127.0.0.1:5432) for its half.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random

import psycopg
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.ingestion.formats.base import ReadOptions
from auditor.ingestion.readers import LabelFileReader
from auditor.services.ingest.labels import import_batches
from auditor.services.label_studio.sync import sync_project
from auditor.services.label_studio.webhook import receive_event
from auditor.services.projects.projects import create_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

ADMIN = os.environ.get(
    "AUDITOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
CATEGORIES = ["Normal", "Pneumonia", "Effusion", "Cardiomegaly"]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def stamp(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def choice(label: str) -> list[dict]:
    return [{"from_name": "finding", "to_name": "image", "type": "choices",
             "value": {"choices": [label]}}]  # fmt: skip


def export(tasks: int, seed: int = 28) -> list[dict]:
    rng = Random(seed)
    out, ident = [], 0
    for t in range(1, tasks + 1):
        truth = rng.choice(CATEGORIES)
        annotations = []
        for user in rng.sample(range(2, 12), 4):
            ident += 1
            label = truth if rng.random() < 0.8 else rng.choice(CATEGORIES)
            edited = 600 if rng.random() < 0.05 else 0
            annotations.append({
                "id": ident, "task": t, "completed_by": user, "result": choice(label),
                "was_cancelled": rng.random() < 0.02, "created_at": stamp(ident),
                "updated_at": stamp(ident + edited), "parent_prediction": None,
            })  # fmt: skip
        prediction = {"id": t, "task": t, "model_version": "judge-v1",
                      "result": choice(rng.choice(CATEGORIES)), "created_at": stamp(t),
                      "updated_at": stamp(t)}  # fmt: skip
        out.append({"id": t, "data": {"case": f"case-{t:05d}"}, "annotations": annotations,
                    "predictions": [prediction], "created_at": stamp(0),
                    "updated_at": stamp(ident)})  # fmt: skip
    return out


@contextmanager
def database(backend: str, tmp: Path) -> Iterator[str]:
    if backend == "sqlite":
        path = tmp / f"{uuid.uuid4().hex}.db"
        yield f"sqlite:///{path}"
        path.unlink(missing_ok=True)
        return
    name = f"auditor_b_{uuid.uuid4().hex[:8]}"
    libpq = make_url(ADMIN).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(libpq, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(ADMIN).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(libpq, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _route(route: str, uow: UnitOfWork, path: Path, tasks: list[dict]) -> Callable[[], object]:
    """The import of the export file, or the sync of its tasks, into project "b"."""

    def imported() -> None:
        reader = LabelFileReader(path, 10_000, "label-studio", ReadOptions())
        assert not import_batches(uow, "b", reader, label_studio_keys=True).rejected

    return imported if route == "import" else (lambda: sync_project(uow, "b", tasks))


def one_round(backend: str, tmp: Path, path: Path, tasks: list[dict]) -> dict[str, float]:
    found: dict[str, float] = {}
    for route in ("import", "sync"):
        with database(backend, tmp) as url:
            migrate.upgrade(url)
            engine = make_engine(url)
            uow = UnitOfWork(engine)
            create_project(uow, "b", CATEGORIES)
            call = _route(route, uow, path, tasks)
            found[f"{route} first"] = timed(call)
            found[f"{route} again"] = timed(call)
            engine.dispose()
    with database(backend, tmp) as url:
        migrate.upgrade(url)
        engine = make_engine(url)
        uow = UnitOfWork(engine)
        create_project(uow, "b", CATEGORIES)
        events = [{"action": "ANNOTATION_CREATED", "task": t, "annotation": a}
                  for t in tasks[:100] for a in t["annotations"]]  # fmt: skip
        seconds = timed(lambda: [receive_event(uow, "b", e) for e in events])
        found["webhook events/s"] = len(events) / seconds
        engine.dispose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    tasks = export(args.tasks)
    annotations = sum(len(t["annotations"]) for t in tasks)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        path = tmp / "export.json"
        path.write_text(json.dumps(tasks))
        print(f"{args.tasks} tasks, {annotations} annotations, {args.tasks} predictions")
        for backend in args.backends.split(","):
            rounds = []
            for n in range(args.rounds):
                rounds.append(one_round(backend, tmp, path, tasks))
                print(f"  {backend} round {n + 1}: load {os.getloadavg()[0]:.1f}", flush=True)
            median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            print(f"{backend} (median of {args.rounds}, load {os.getloadavg()}):")
            for key, value in median.items():
                unit = "" if key.endswith("/s") else " s"
                print(f"  {key:<18} {value:8.2f}{unit}")
            print(
                f"  sync first / import first: {median['sync first'] / median['import first']:.2f}x"
            )
            print(
                f"  sync again / import again: {median['sync again'] / median['import again']:.2f}x"
            )


if __name__ == "__main__":
    main()
