"""One table of scenarios for the duplicate and repeat rules, run through every implementation
of them (issue 23 item 2), on both databases:

- ``batch``: the Python path of API batches (``ingest_labels``: ``validate_batch`` inside the
  batch, ``services/ingest/batch_writer.write_batch`` against stored labels);
- ``staged``: file imports (``import_batches``: the staging table's set-based SQL,
  ``storage/staging.py``), one row a batch so every repeat is judged in SQL, and the whole
  file in one batch so the repeats inside it are judged in Python first;
- ``memory``: ``auditor stats <file> --json`` (``ingestion/arrays.py``, no database), for the
  scenarios without stored labels.

The rules (docs/imports.md): a row with a client key repeating a key, earlier in the input
or stored, with the same content is a duplicate (stored once), with other content an error on
``key``; a row without a key that gives labeled_at is identified by (item, rater, session,
labeled_at) the same way (error on ``label``); a row without either is always a new label (a
repeat presentation of the item when the rater labeled it before). A change to one path that
the others lack fails here.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from auditor.cli import app
from auditor.ingestion.errors import IngestRejected
from auditor.ingestion.readers import LabelFileReader
from auditor.services.ingest.labels import import_batches, ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage.unit_of_work import UnitOfWork

T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:05:00Z"
FIELDS = ("item", "rater", "label", "labeled_at", "session", "key")


def row(item="i", rater="r", label="a", at=None, session=None, key=None) -> dict[str, str]:
    values = dict(zip(FIELDS, (item, rater, label, at, session, key), strict=True))
    return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class Scenario:
    name: str
    rows: tuple[dict[str, str], ...]
    stored: tuple[dict[str, str], ...] = ()
    kept: int = 0  # new labels written (or counted by `auditor stats`)
    duplicates: int = 0
    error: tuple[int, str] | None = None  # (position of the bad row, counting from 0; field)


SCENARIOS = [
    # repeats inside the input
    Scenario("timed twice, same label", (row(at=T1), row(at=T1)), kept=1, duplicates=1),
    Scenario("timed twice, other label", (row(at=T1), row(label="b", at=T1)), error=(1, "label")),
    Scenario("same rater and item, later: a repeat", (row(at=T1), row(at=T2)), kept=2),
    Scenario("untimed twice: two presentations", (row(), row()), kept=2),
    Scenario(
        "same time, other session", (row(at=T1, session="s1"), row(at=T1, session="s2")), kept=2
    ),
    Scenario("same time, other rater", (row(at=T1), row(rater="q", at=T1)), kept=2),
    Scenario("key twice, same content", (row(key="k"), row(key="k")), kept=1, duplicates=1),
    Scenario("key twice, other content", (row(key="k"), row(label="b", key="k")), error=(1, "key")),
    Scenario("two keys, same identity", (row(at=T1, key="k1"), row(at=T1, key="k2")), kept=2),
    # repeats of stored labels
    Scenario("stored, timed, same label", (row(at=T1),), (row(at=T1),), duplicates=1),
    Scenario("stored, timed, other", (row(label="b", at=T1),), (row(at=T1),), error=(0, "label")),
    Scenario("stored, untimed: another presentation", (row(),), (row(),), kept=1),
    Scenario("stored key, same content", (row(key="k"),), (row(key="k"),), duplicates=1),
    Scenario("stored key, label b", (row(label="b", key="k"),), (row(key="k"),), error=(0, "key")),
    Scenario("stored key, item j", (row(item="j", key="k"),), (row(key="k"),), error=(0, "key")),
    Scenario(
        "stored key with a time, given without", (row(key="k"),), (row(at=T1, key="k"),),
        duplicates=1,
    ),
    Scenario(
        "stored key, other time", (row(at=T2, key="k"),), (row(at=T1, key="k"),), error=(0, "key")
    ),
]  # fmt: skip


def _write(path: Path, rows: tuple[dict[str, str], ...]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _through_batch(engine: Engine, slug: str, scenario: Scenario, tmp_path: Path) -> tuple:
    try:
        result = ingest_labels(UnitOfWork(engine), slug, list(scenario.rows))
    except IngestRejected as rejected:
        (error,) = rejected.errors
        return (0, 0, (error.row - 1, error.field))  # API rows count from 1
    return (result.inserted, result.duplicates, None)


def _through_staged(
    engine: Engine, slug: str, scenario: Scenario, tmp_path: Path, batch: int
) -> tuple:
    path = _write(tmp_path / f"{slug}.csv", scenario.rows)
    result = import_batches(UnitOfWork(engine), slug, LabelFileReader(path, batch))
    if result.rejected:
        (error,) = result.errors
        return (0, 0, (error.row - 2, error.field))  # file rows count the header line as 1
    return (result.inserted, result.duplicates, None)


PATHS = {
    "batch": _through_batch,
    "staged, a row a batch": lambda e, p, s, t: _through_staged(e, p, s, t, 1),
    "staged, one batch": lambda e, p, s, t: _through_staged(e, p, s, t, 1000),
}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_path_judges_repeats_alike(engine: Engine, tmp_path: Path, scenario: Scenario):
    outcomes = {}
    for number, (name, through) in enumerate(PATHS.items()):
        slug = f"p{number}"  # a project of each path's own
        create_project(UnitOfWork(engine), slug, ["a", "b"])
        if scenario.stored:
            ingest_labels(UnitOfWork(engine), slug, list(scenario.stored))
        outcomes[name] = through(engine, slug, scenario, tmp_path)
    expected = (scenario.kept, scenario.duplicates, scenario.error)
    assert outcomes == dict.fromkeys(PATHS, expected)


IN_MEMORY = [s for s in SCENARIOS if not s.stored]


@pytest.mark.parametrize("scenario", IN_MEMORY, ids=[s.name for s in IN_MEMORY])
def test_auditor_stats_judges_repeats_as_the_imports_do(tmp_path: Path, scenario: Scenario):
    path = _write(tmp_path / "labels.csv", scenario.rows)
    result = CliRunner().invoke(app, ["stats", str(path), "--json", "--categories", "a,b"])
    if scenario.error is not None:
        position, field = scenario.error
        assert result.exit_code != 0, result.output
        assert f"row {position + 2}, field '{field}'" in result.output, result.output
        return
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n_labels"] == scenario.kept
