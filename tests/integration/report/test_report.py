"""``auditor report``: one self-contained HTML file holding every snapshot in its charts, and
PNG figures that are real images; clear errors for a wrong project or no output."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.image
import pytest

from auditor.services.demo.simulation import DemoConfig, run_demo
from auditor.services.projects.projects import create_project
from auditor.services.queries.dashboard import PROJECT_METRICS
from auditor.services.queries.history import metric_history
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

CONFIG = DemoConfig(seed=3, days=4, items_per_day=40, slug="demo")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('report') / 'auditor.db'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    run_demo(UnitOfWork(engine), CONFIG)
    create_project(UnitOfWork(engine), "empty", ["a", "b"])
    engine.dispose()
    return url


def test_html_report_is_self_contained_and_complete(cli, seeded: str, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "report.html"
    result = cli("report", "demo", "--out", str(out))
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    # Self-contained: no script, no stylesheet link, no image or resource fetched by URL.
    assert "<script" not in html and "<link" not in html
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", html)
    assert "<style>" in html
    engine = make_engine(seeded)
    for metric, _title in PROJECT_METRICS:
        points = metric_history(UnitOfWork(engine, read_only=True), "demo", metric)
        found = re.search(rf'data-chart="{metric}" data-points="(\d+)"', html)
        assert found is not None, f"no chart for {metric}"
        assert int(found.group(1)) == len(points) > 5
        assert html.count(f'data-point="{metric}"') == len(points)
    engine.dispose()
    assert 'data-chart="cohen-heatmap"' in html
    assert "0.667 tentative" in html and "0.800 acceptable" in html
    assert "0.60 substantial" in html  # kappa charts speak the cards' Landis-Koch words
    assert html.count('data-legend="page"') == 1  # one legend for the page's charts
    assert "watermark" not in html
    # issue 10: rho says what it is; the rater table shows the rater model's reliability
    assert "rho (reliability-weighted agreement)" in html
    headers = re.findall(r'<th data-column="[a-z_]+">([^<]+)</th>', html)
    assert headers[:4] == [
        "Self-agreement",
        "Reliability",
        "Random-choice share",
        "S against the group",
    ]


def test_png_figures_are_images(cli, tmp_path: Path) -> None:
    result = cli("report", "demo", "--png", str(tmp_path / "png"))
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert names == sorted([f"{m}.png" for m, _ in PROJECT_METRICS] + ["cohen_heatmap.png"])
    for name in names:
        image = matplotlib.image.imread(tmp_path / "png" / name)
        assert image.shape[0] > 200 and image.shape[1] > 300
        assert image.std() > 0.01, f"{name} is blank"


def test_empty_project_report_explains_and_png_refuses(cli, tmp_path: Path) -> None:
    result = cli("report", "empty", "--out", str(tmp_path / "e.html"))
    assert result.exit_code == 0, result.output
    assert "No snapshots yet" in (tmp_path / "e.html").read_text()
    result = cli("report", "empty", "--png", str(tmp_path / "png"))
    assert result.exit_code == 1
    assert "has no snapshot yet" in result.stderr


def test_errors_name_the_problem(cli, tmp_path: Path) -> None:
    result = cli("report", "nope", "--out", str(tmp_path / "x.html"))
    assert result.exit_code == 1 and "no project 'nope'" in result.stderr
    assert not (tmp_path / "x.html").exists()
    result = cli("report", "demo")
    assert result.exit_code == 2 and "--out" in result.stderr
    # --out writes HTML: a .png name is refused (pointing at --png), nothing written
    result = cli("report", "demo", "--out", str(tmp_path / "x.png"))
    assert result.exit_code == 2 and "--png DIR" in result.stderr
    assert not (tmp_path / "x.png").exists()
    result = cli("report", "demo", "--out", str(tmp_path / "x.pdf"))
    assert result.exit_code == 2 and "name it .html" in result.stderr


def test_report_opens_with_attention_and_says_what_changed_since(
    cli, seeded: str, tmp_path: Path
) -> None:
    """issue 27: the report a lead mails: who needs attention first, the headline with its
    band and meaning, and what changed over ``--since``."""
    out = tmp_path / "monday.html"
    result = cli("report", "demo", "--out", str(out), "--since", "2d")
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert html.index('id="attention"') < html.index('id="changes"') < html.index("data-headline")
    assert html.index("data-headline") < html.index('data-table="raters"')
    headline = re.search(r"data-headline>([^<]+)<", html)
    assert headline is not None and "Landis-Koch" in headline.group(1)
    assert re.search(r'<tr data-change="kappa_s">', html)
    assert "Compared with the cumulative snapshot of" in html
    bad = cli("report", "demo", "--out", str(out), "--since", "a week")
    assert bad.exit_code == 2 and "--since: not a duration" in bad.output
