"""The dashboard in headless Chromium against a real uvicorn server with seeded data.

Each page must load without console errors or failed requests, the charts must hold exactly
the points the history service returns, links must lead where they say, and the empty states
must explain themselves. Screenshots go to test-artifacts/browser/.
"""

from __future__ import annotations

from html import unescape

import httpx
import pytest

from auditor.services.queries.dashboard import PROJECT_METRICS, RATER_METRICS
from auditor.services.queries.history import metric_history
from auditor.storage.db import make_engine
from auditor.storage.history_buckets import SPARK_BUCKETS, max_points
from auditor.storage.unit_of_work import UnitOfWork
from tests.e2e.browser.conftest import DEMO, screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

DEGRADING = "r07"


def _expected(database_url: str, metric: str, subject: str | None) -> dict[str, int]:
    """Points per scope, and in total, as the history service reports them."""
    engine = make_engine(database_url)
    try:
        points = metric_history(
            UnitOfWork(engine, read_only=True), DEMO.slug, metric, subject=subject
        )
    finally:
        engine.dispose()
    counts: dict[str, int] = {}
    for point in points:
        counts[point.scope] = counts.get(point.scope, 0) + 1
    return {"total": len(points), "defined": sum(p.value is not None for p in points), **counts}


def _chart_counts(page, chart: str) -> tuple[int, int, int]:
    svg = page.locator(f'svg[data-chart="{chart}"]')
    assert svg.count() == 1, f"expected one chart {chart!r}"
    return (
        int(svg.get_attribute("data-points")),
        int(svg.get_attribute("data-defined")),
        page.locator(f'svg[data-chart="{chart}"] [data-point="{chart}"]').count(),
    )


def test_projects_page_lists_projects_with_state(server, page):
    page, watch = page
    response = page.goto(server.base_url + "/")
    assert response.status == 200
    rows = page.locator('table[data-table="projects"] tbody tr')
    assert rows.count() == 2
    demo = page.locator('tr[data-project="demo"]')
    assert "[" in demo.inner_text(), "kappa_S and rho are shown with their intervals"
    assert demo.locator("[data-alert-state]").get_attribute("data-alert-state") != "unconfigured"
    assert "no snapshot yet" in page.locator('tr[data-project="empty"]').inner_text()
    screenshot(page, "projects")
    assert watch.errors == []


def test_project_page_charts_hold_every_snapshot(server, page):
    page, watch = page
    assert page.goto(f"{server.base_url}/projects/{DEMO.slug}").status == 200
    for metric, _title in PROJECT_METRICS:
        expected = _expected(server.database_url, metric, None)
        assert expected["total"] > 10
        total, defined, drawn = _chart_counts(page, metric)
        assert (total, defined, drawn) == (
            expected["total"],
            expected["defined"],
            expected["total"],
        )
        assert expected.get("7d"), "the rolling window has its own series"
    # issue 27: one legend for the page, with the snapshot counts of each scope
    legend = page.locator('[data-legend="page"]')
    assert legend.count() == 1
    assert f"cumulative ({expected['cumulative']} snapshots)" in legend.inner_text()
    assert f"last 7 days ({expected['7d']} snapshots)" in legend.inner_text()
    assert page.locator("figure .legend").count() == 0
    # Threshold lines (Landis-Koch's, as on the kappa_S card) and interval bands are drawn.
    kappa = page.locator('svg[data-chart="kappa_s"]')
    assert kappa.locator("[data-threshold]").count() >= 2
    assert kappa.locator("[data-band]").count() >= 2
    screenshot(page, "project")
    assert watch.errors == []


def test_rater_table_heatmap_and_sparklines(server, page):
    page, watch = page
    page.goto(f"{server.base_url}/projects/{DEMO.slug}")
    raters = page.locator('table[data-table="raters"] tbody tr')
    assert raters.count() == 10
    # issue 10: the rater model's reliability beside self-agreement; rho says what it is
    header = page.locator('table[data-table="raters"] thead').inner_text()
    assert "Self-agreement\tReliability\tRandom-choice share" in header
    row = page.locator(f'tr[data-rater="{DEGRADING}"]').inner_text().split("\t")
    assert row[2][0].isdigit() and row[3][0].isdigit()  # reliability and random choice shown
    card = page.locator('[data-card="rho"]').inner_text()
    assert "reliability-weighted agreement" in card
    expected = _expected(server.database_url, "self_agreement", f"rater:{DEGRADING}")
    spark = page.locator(f'svg[data-chart="spark-{DEGRADING}"]')
    # The sparkline follows the 7-day window and draws its defined values only.
    engine = make_engine(server.database_url)
    window = metric_history(
        UnitOfWork(engine, read_only=True), DEMO.slug, "self_agreement",
        subject=f"rater:{DEGRADING}", scopes=["7d"],
    )  # fmt: skip
    engine.dispose()
    assert expected["total"] > 0
    defined = [p.value for p in window if p.value is not None]
    drawn = int(spark.get_attribute("data-points"))
    if len(window) <= SPARK_BUCKETS:
        assert drawn == len(defined)
    else:  # issue 22: bounded, keeping the lowest value (her drop) and the latest
        assert len(defined) / 2 <= drawn <= max_points(SPARK_BUCKETS)
        marked = spark.locator("[data-value]")
        assert float(marked.last.get_attribute("data-value")) == pytest.approx(defined[-1])
    # 10 human raters: at most 45 pairs, each drawn in both halves of the matrix.
    heat = page.locator('svg[data-chart="cohen-heatmap"]')
    cells = int(heat.get_attribute("data-cells"))
    assert 30 <= cells <= 45
    assert heat.locator("[data-cell]").count() == 2 * cells
    assert page.locator('table[data-table="models"] tbody tr').count() == 1
    alerts = page.locator(
        '[data-empty="alerts"], [data-table="alerts"], [data-empty="alert-timeline"]'
    )
    assert alerts.count() >= 1
    assert watch.errors == []


def test_navigation_projects_to_project_to_rater_and_back(server, page):
    page, watch = page
    page.goto(server.base_url + "/")
    page.locator('tr[data-project="demo"] a').click()
    page.wait_for_url(f"**/projects/{DEMO.slug}")
    assert page.locator("[data-project-title]").inner_text().startswith("Demo")
    page.locator(f'tr[data-rater="{DEGRADING}"] a').click()
    page.wait_for_url(f"**/projects/{DEMO.slug}/raters/{DEGRADING}")
    for metric, _title in RATER_METRICS:
        expected = _expected(server.database_url, metric, f"rater:{DEGRADING}")
        total, defined, drawn = _chart_counts(page, metric)
        assert (total, defined, drawn) == (
            expected["total"],
            expected["defined"],
            expected["total"],
        )
    assert page.locator('table[data-table="pairs"] tbody tr').count() >= 5
    header = page.locator('table[data-table="rater-values"] thead').inner_text()
    assert "Cumulative" in header and "last 7 days" in header
    # Hovering a point shows its tooltip (the one piece of script).
    page.locator('svg[data-chart="self_agreement"] [data-point]').last.hover()
    assert "UTC" in page.locator("#tooltip").inner_text()
    screenshot(page, "rater")
    page.locator('table[data-table="pairs"] a').first.click()
    page.wait_for_url(f"**/projects/{DEMO.slug}/raters/r*")
    page.locator('a[data-nav="back"]').click()
    page.wait_for_url(f"**/projects/{DEMO.slug}")
    page.locator('a[data-nav="projects"]').click()
    page.wait_for_url(server.base_url + "/")
    assert watch.errors == []


def test_model_rater_page(server, page):
    page, watch = page
    assert page.goto(f"{server.base_url}/projects/{DEMO.slug}/raters/model-v1").status == 200
    for metric in ("s", "kappa_va"):
        expected = _expected(server.database_url, metric, "model:model-v1")
        assert _chart_counts(page, metric)[0] == expected["total"]
    assert watch.errors == []


def test_empty_project_explains_itself(server, page):
    page, watch = page
    assert page.goto(f"{server.base_url}/projects/empty").status == 200
    assert "No snapshots yet" in page.locator('[data-empty="snapshots"]').inner_text()
    assert "auditor recompute empty" in page.locator('[data-empty="snapshots"]').inner_text()
    assert "Cohen's kappa needs two raters" in page.locator('[data-empty="pairs"]').inner_text()
    screenshot(page, "project-empty")
    assert watch.errors == []


def test_unknown_project_and_rater_are_404_pages(server):
    missing = httpx.get(f"{server.base_url}/projects/nope")
    assert missing.status_code == 404 and "no project 'nope'" in unescape(missing.text)
    rater = httpx.get(f"{server.base_url}/projects/{DEMO.slug}/raters/nobody")
    assert rater.status_code == 404 and "no rater 'nobody'" in unescape(rater.text)
