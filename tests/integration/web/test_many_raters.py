"""Pages for many raters (issue 22 item 2): above a few dozen raters the project page shows
the pairwise summary instead of the matrix, the full matrix is a download, rater rows sort
naturally (r2 before r10)."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import text

from auditor.config import Settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.dashboard import TABLE_LIMIT
from auditor.services.queries.pairs import MATRIX_LIMIT
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.snapshot_repository import LEAN_PAIRS
from auditor.storage.unit_of_work import UnitOfWork
from auditor.web import install_dashboard

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
RATERS = MATRIX_LIMIT + 6


def _seed(url: str, slug: str, raters: int) -> None:
    engine = make_engine(url)
    create_project(UnitOfWork(engine), slug, ["a", "b", "c"])
    rng = np.random.default_rng(5)
    rows = []
    for item in range(400):
        truth = int(rng.integers(3))
        for r in rng.choice(raters, size=4, replace=False):
            label = truth if rng.random() < 0.8 else int(rng.integers(3))
            rows.append(
                {
                    "item": f"i{item}",
                    "rater": f"r{int(r) + 1}",
                    "label": "abc"[label],
                    "labeled_at": NOW - timedelta(hours=2, seconds=item),
                }
            )
    ingest_labels(UnitOfWork(engine), slug, rows, received_at=NOW)
    recompute_project(UnitOfWork(engine), find_project_id(UnitOfWork(engine), slug), now=NOW)
    engine.dispose()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    url = f"sqlite:///{tmp_path_factory.mktemp('many') / 'auditor.db'}"
    migrate.upgrade(url)
    _seed(url, "many", RATERS)
    _seed(url, "few", 6)
    app = FastAPI()
    app.state.settings = Settings(database_url=url)  # type: ignore[call-arg]
    install_dashboard(app, token="")
    return TestClient(app, client=("127.0.0.1", 41000))


def test_many_raters_get_a_summary_not_a_matrix(client: TestClient) -> None:
    page = client.get("/projects/many/raters").text
    assert 'data-chart="cohen-heatmap"' not in page
    assert 'data-table="pair-summary"' in page and 'data-table="weakest-pairs"' in page
    summary = re.findall(r'data-pair-rater="([^"]+)"', page)
    assert sorted(summary) == sorted(f"r{i}" for i in range(1, RATERS + 1))
    assert 'href="/projects/many/pairs.csv"' in page
    # the rater table: every rater, naturally ordered among raters of equal concern
    assert sorted(re.findall(r'<tr data-rater="(r\d+)"', page)) == sorted(summary)
    rows = re.findall(r'<tr data-rater="(r\d+)"(?![^>]*data-flagged)', page)
    numbers = [int(r[1:]) for r in rows]
    assert numbers == sorted(numbers), rows


def test_project_page_shows_the_raters_of_most_concern(client: TestClient) -> None:
    """Above TABLE_LIMIT raters the project page's table has the first TABLE_LIMIT rows of
    the all-raters page (by concern, then by name), links to it, and lists the weakest pairs
    (the same as the all-raters page's) instead of every rater's pair summary."""
    page = client.get("/projects/many").text
    every = client.get("/projects/many/raters").text
    rows = re.findall(r'<tr data-rater="(r\d+)"', page)
    assert rows == re.findall(r'<tr data-rater="(r\d+)"', every)[:TABLE_LIMIT]
    assert f'data-raters-hidden="{RATERS - TABLE_LIMIT}"' in page
    assert 'href="/projects/many/raters"' in page
    assert 'data-table="pair-summary"' not in page and 'data-chart="cohen-heatmap"' not in page
    weakest = re.findall(r'data-weak-pair="([^"]+)"', page)
    assert weakest and weakest == re.findall(r'data-weak-pair="([^"]+)"', every)
    assert 'href="/projects/many/pairs.csv"' in page
    assert client.get("/projects/nope/raters").status_code == 404
    few = client.get("/projects/few").text
    assert "data-raters-hidden" not in few and len(re.findall(r'<tr data-rater="r', few)) == 6


def test_lean_copy_reads_as_the_result_without_pairs(client: TestClient) -> None:
    """A snapshot with many pairs keeps its result without them (``lean``); reading the rater
    parts from it gives what reading them from the result gives."""
    engine = make_engine(client.app.state.settings.database_url)  # type: ignore[attr-defined]
    try:
        project_id = find_project_id(UnitOfWork(engine), "many")
        with UnitOfWork(engine) as uow:
            full = uow.snapshots.snapshot_at(project_id, "cumulative", None)
            assert full is not None and len(full["result"]["pairwise_cohen"]) > LEAN_PAIRS
            lean = uow.snapshots.snapshot_without_at(
                project_id, "cumulative", None, "pairwise_cohen"
            )
            parts = uow.snapshots.snapshot_parts_at(project_id, "cumulative", None, ("raters",))
        with engine.connect() as db:
            kept = db.execute(
                text("SELECT lean IS NOT NULL FROM snapshots WHERE id = :i"), {"i": full["id"]}
            ).scalar()
        assert kept
        expected = {k: v for k, v in full["result"].items() if k != "pairwise_cohen"}
        assert lean is not None and lean["result"] == expected
        assert parts is not None and parts["result"]["raters"] == expected["raters"]
        with engine.begin() as db:  # without the copy (a snapshot of few pairs): the same
            db.execute(text("UPDATE snapshots SET lean = NULL WHERE id = :i"), {"i": full["id"]})
        with UnitOfWork(engine) as uow:
            again = uow.snapshots.snapshot_without_at(
                project_id, "cumulative", None, "pairwise_cohen"
            )
        assert again is not None and again["result"] == expected
        with engine.begin() as db:
            db.execute(
                text(
                    "UPDATE snapshots SET lean = json_remove(result, '$.pairwise_cohen') "
                    "WHERE id = :i"
                ),
                {"i": full["id"]},
            )
    finally:
        engine.dispose()


def test_few_raters_keep_the_matrix(client: TestClient) -> None:
    page = client.get("/projects/few").text
    assert 'data-chart="cohen-heatmap"' in page and 'data-table="pair-summary"' not in page


def test_the_full_matrix_downloads_as_csv_and_json(client: TestClient) -> None:
    response = client.get("/projects/many/pairs.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert rows and set(rows[0]) == {
        "rater_a", "rater_b", "kappa", "ci_low", "ci_high", "n_items", "reason",
    }  # fmt: skip
    as_json = client.get("/projects/many/pairs.json").json()
    assert len(as_json) == len(rows)
    assert {(r["rater_a"], r["rater_b"]) for r in as_json} == {
        (r["rater_a"], r["rater_b"]) for r in rows
    }
    assert client.get("/projects/many/pairs.xml").status_code == 404
    assert client.get("/projects/nope/pairs.csv").status_code == 404


def test_page_stays_small(tmp_path: Path, client: TestClient) -> None:
    assert len(client.get("/projects/many").content) < 1_000_000
