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

from auditor.config import Settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.pairs import MATRIX_LIMIT
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
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
    page = client.get("/projects/many").text
    assert 'data-chart="cohen-heatmap"' not in page
    assert 'data-table="pair-summary"' in page and 'data-table="weakest-pairs"' in page
    summary = re.findall(r'data-pair-rater="([^"]+)"', page)
    assert sorted(summary) == sorted(f"r{i}" for i in range(1, RATERS + 1))
    assert 'href="/projects/many/pairs.csv"' in page
    # the rater table: naturally ordered among raters of equal concern
    rows = re.findall(r'<tr data-rater="(r\d+)"(?![^>]*data-flagged)', page)
    numbers = [int(r[1:]) for r in rows]
    assert numbers == sorted(numbers), rows


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
