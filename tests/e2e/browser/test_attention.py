"""Who needs attention (issue 27), in Chromium: first on the demo's project page, r07 first.

The seeded demo ends during r07's bad stretch (days 4-8 of 9); ``test_after_the_bad_week``
seeds a longer demo that ends a week after her retraining and reads the page's HTML.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from auditor.presentation.pages import Renderer
from auditor.services.queries.dashboard import project_detail
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.e2e.browser.conftest import DEMO, screenshot, seed_project

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


def test_attention_is_first_and_lists_r07_first(server, page):
    page, watch = page
    response = page.goto(f"{server.base_url}/projects/{DEMO.slug}")
    assert response.status == 200
    section = page.locator("section#attention")
    assert section.count() == 1
    # first on the page: before the headline cards, the charts and the rater table
    found = "main section#attention, main .cards, main table[data-table=raters], main .charts"
    order = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(e => e.id || e.className)", found
    )
    assert order[0] == "attention", order
    listed = section.locator("li[data-attention-subject]")
    assert listed.count() >= 1
    first = listed.first
    assert first.get_attribute("data-attention-subject") == "r07"
    sentence = first.locator(".attention-sentence").inner_text()
    assert "fell to" in sentence and "since" in sentence, sentence
    # her small multiples: self-agreement, reliability, agreement with the group
    assert first.locator("svg.chart").count() == 3
    assert first.locator('a[href$="/raters/r07"]').count() == 1
    # the rater table puts her first, flagged
    first_row = page.locator('table[data-table="raters"] tbody tr').first
    assert first_row.get_attribute("data-rater") == "r07"
    assert "drop" in (first_row.get_attribute("data-flagged") or "")
    screenshot(page, "attention")
    assert watch.errors == []


def test_empty_project_says_nobody_needs_attention(server, page):
    page, watch = page
    page.goto(f"{server.base_url}/projects/empty")
    assert page.locator('section#attention [data-attention="none"]').count() == 1
    assert watch.errors == []


def test_after_the_bad_week_r07_is_still_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'after.db'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    try:
        # 20 days: bad days 10-14, retrained for the last 5 days; the 7-day window has recovered
        seed_project(engine, replace(DEMO, days=20))
        detail = project_detail(UnitOfWork(engine, read_only=True), DEMO.slug)
    finally:
        engine.dispose()
    assert detail.attention, "her recovered fall is listed"
    first = detail.attention[0]
    assert first.subject == "r07"
    assert "is back at" in first.sentence, first.sentence
    html = Renderer().project_page(detail)
    assert html.index('id="attention"') < html.index('data-table="raters"')


def test_her_page_says_why_she_needs_attention(server, page):
    page, watch = page
    assert page.goto(f"{server.base_url}/projects/{DEMO.slug}/raters/r07").status == 200
    said = page.locator("[data-rater-attention]")
    assert said.count() == 1
    assert "Agreement with the group fell to" in said.inner_text()
    assert watch.errors == []
