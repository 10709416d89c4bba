"""The project page and the report name the kappa paradox in words and show AC1 and PABAK beside
kappa_S; an ordinal project's page shows the weighted coefficients first, each rater's grade
bias, and a rater's confusion as a heat map (issue 24 item 3)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from auditor.presentation.pages import Renderer
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.dashboard import project_detail, rater_detail
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def _rows(matrix: np.ndarray, categories: list[str], raters: list[str]) -> list[dict]:
    return [
        {
            "item": f"case{u}",
            "rater": rater,
            "label": categories[int(matrix[u, r])],
            "labeled_at": T0 + timedelta(minutes=u, seconds=r),
        }
        for u in range(matrix.shape[0])
        for r, rater in enumerate(raters)
    ]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('coefficients') / 'auditor.db'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    rng = np.random.default_rng(44)
    truth = (rng.random(600) < 0.05).astype(int)
    screen = np.repeat(truth[:, None], 3, axis=1)
    screen = np.where(rng.random(screen.shape) < 0.06, 1 - screen, screen)
    create_project(UnitOfWork(engine), "screen", ["normal", "malignant"], windows_days=())
    ingest_labels(
        UnitOfWork(engine), "screen", _rows(screen, ["normal", "malignant"], ["ann", "bob", "cat"])
    )
    grades = rng.choice(5, size=400, p=[0.3, 0.3, 0.2, 0.12, 0.08])
    panel = np.repeat(grades[:, None], 4, axis=1)
    panel = np.clip(
        panel + np.where(rng.random(panel.shape) < 0.25, rng.choice([-1, 1], panel.shape), 0), 0, 4
    )
    panel[:, 3] = np.clip(panel[:, 3] + 1, 0, 4)
    create_project(
        UnitOfWork(engine), "birads", ["1", "2", "3", "4", "5"], scale="ordinal", windows_days=()
    )
    ingest_labels(
        UnitOfWork(engine), "birads", _rows(panel, list("12345"), ["r1", "r2", "r3", "severe"])
    )
    for slug in ("screen", "birads"):
        recompute_project(
            UnitOfWork(engine),
            find_project_id(UnitOfWork(engine), slug),
            now=T0 + timedelta(days=2),
        )
    engine.dispose()
    return url


def _cards(html: str) -> list[str]:
    return re.findall(r'data-card="([a-z_0-9]+)"', html)


def test_report_names_the_paradox_and_shows_ac1_and_pabak(cli, tmp_path: Path) -> None:
    out = tmp_path / "screen.html"
    assert cli("report", "screen", "--out", str(out)).exit_code == 0
    html = out.read_text(encoding="utf-8")
    said = re.search(r"<p class=\"callout\" data-paradox>([^<]*)</p>", html)
    assert said is not None
    text = said.group(1).replace("&#39;", "'")
    assert re.match(r"Raters agree on \d+% of items, mostly on 'normal' \(\d+% of labels\); "
                    r"on 'malignant' they agree \d+% of the time", text), text  # fmt: skip
    cards = _cards(html)
    assert cards[:3] == ["kappa_s", "ac1", "bp"]  # AC1 and PABAK beside kappa_S
    assert "kappa_s_w" not in cards  # a nominal project has no weighted coefficient
    assert 'data-category="malignant"' in html


def test_ordinal_page_puts_weighted_coefficients_first_and_shows_grade_bias(seeded: str) -> None:
    engine = make_engine(seeded)
    try:
        pages = Renderer()
        html = pages.project_page(project_detail(UnitOfWork(engine, read_only=True), "birads"))
        assert _cards(html)[:2] == ["kappa_s_w", "alpha_ordinal"]
        assert 'data-column="grade_bias"' in html
        assert "data-paradox" not in html  # no dominant category here
        rater = pages.rater_page(
            rater_detail(UnitOfWork(engine, read_only=True), "birads", "severe")
        )
        assert 'data-metric="grade_bias"' in rater
        bias = re.search(r'data-metric="grade_bias">.*?<span[^>]*>([-0-9.]+)', rater, re.S)
        assert bias is not None and float(bias.group(1)) > 0.7
        assert 'data-table="confusion"' in rater
        rows = re.findall(r'data-confusion-row="(\d)"', rater)
        assert rows == list("12345")
        assert "Weighted (cohen_w)" in rater
    finally:
        engine.dispose()
