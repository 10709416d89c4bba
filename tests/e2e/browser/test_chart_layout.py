"""Charts read at a glance: measured in Chromium, no two texts of a chart overlap and no text
leaves its chart, on the project page, a rater page and the static report. Also: reference
lines only on agreement coefficients, the value range fitted to the data, and the alert
timeline as wide as the page. Screenshots go to test-artifacts/browser/."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.charts import (
    ChartPoint,
    ChartSeries,
    HeatCell,
    TimelineSpan,
    heatmap,
    line_chart,
    timeline,
)
from auditor.presentation.report import render_report
from auditor.services.queries.dashboard import project_detail
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.e2e.browser.conftest import ARTIFACTS, DEMO, screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

# Every rendered <text> of every chart (svg) on the page, with its chart's box, in CSS px.
MEASURE = """
() => [...document.querySelectorAll('svg')].map((svg, index) => {
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom};
  }).filter(t => t.right - t.left > 0 && t.bottom - t.top > 0);
  return {
    chart: svg.getAttribute('data-chart') || ('svg #' + index),
    box: {left: box.left, top: box.top, right: box.right, bottom: box.bottom},
    texts: texts,
  };
})
"""
SLACK = 0.5  # px: rounding of glyph boxes
# Undefined markers (hollow, on the x axis) with their chart's texts, in CSS px.
MARKERS = """
() => [...document.querySelectorAll('svg[data-chart]')].map(svg => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {
    chart: svg.getAttribute('data-chart'),
    markers: [...svg.querySelectorAll('circle[data-value=""]')].map(c => ({
      ...box(c), series: c.getAttribute('data-series'), time: c.getAttribute('data-time'),
    })),
    runs: [...svg.querySelectorAll('[data-undefined-run]')].map(box),
    texts: [...svg.querySelectorAll('text')].map(t => ({...box(t), text: t.textContent})),
  };
})
"""
CLEARANCE = 3.0  # px between an undefined marker and any text


def _overlap(a: dict, b: dict) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > SLACK
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > SLACK
    )


def _inside(text: dict, box: dict) -> bool:
    return (
        text["left"] >= box["left"] - SLACK
        and text["right"] <= box["right"] + SLACK
        and text["top"] >= box["top"] - SLACK
        and text["bottom"] <= box["bottom"] + SLACK
    )


def layout_problems(page) -> tuple[list[str], int]:
    """Overlapping texts and texts outside their chart; and how many texts were measured."""
    problems, measured = [], 0
    for chart in page.evaluate(MEASURE):
        texts = chart["texts"]
        measured += len(texts)
        for i, a in enumerate(texts):
            if not _inside(a, chart["box"]):
                problems.append(f"{chart['chart']}: {a['text']!r} leaves the chart")
            for b in texts[i + 1 :]:
                if _overlap(a, b):
                    problems.append(f"{chart['chart']}: {a['text']!r} overlaps {b['text']!r}")
    return problems, measured


def _near(a: dict, b: dict, gap: float) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > -gap
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > -gap
    )


def marker_problems(page) -> tuple[list[str], int]:
    """Undefined markers that come within CLEARANCE of a text of their chart, two markers of
    one series at different times that overlap, and markers out of time order; and how many
    markers were measured."""
    problems, measured = [], 0
    for chart in page.evaluate(MARKERS):
        name, markers = chart["chart"], chart["markers"]
        measured += len(markers)
        for shape in markers + chart["runs"]:
            for text in chart["texts"]:
                if _near(shape, text, CLEARANCE):
                    problems.append(f"{name}: an undefined marker touches {text['text']!r}")
        by_series: dict[str, list[dict]] = {}
        for marker in markers:
            by_series.setdefault(marker["series"], []).append(marker)
        for series, own in by_series.items():
            own.sort(key=lambda m: m["time"])
            for a, b in itertools.pairwise(own):
                if not a["right"] < b["left"] + SLACK or not a["left"] < b["left"]:
                    problems.append(f"{name} {series}: markers at {a['time']} and {b['time']}")
    return problems, measured


def test_project_page_texts_are_clear(server, page) -> None:
    page, watch = page
    assert page.goto(f"{server.base_url}/projects/{DEMO.slug}").status == 200
    screenshot(page, "layout-project")
    problems, measured = layout_problems(page)
    assert measured > 40, "the page should have charts with axes and labels"
    assert problems == []
    assert marker_problems(page)[0] == []
    # the value axis fits the data, not the coefficient's whole range [-1, 1]; rho's early
    # intervals (a few repeats per rater) honestly reach from about 0 to 1, so its axis may
    # span that, but never below what the data and padding need
    for metric in ("kappa_s", "fleiss_kappa", "krippendorff_alpha"):
        svg = page.locator(f'svg[data-chart="{metric}"]')
        low, high = map(float, svg.get_attribute("data-y-range").split())
        assert high - low < 1.0, f"{metric}: the range fits the data, not 0..1"
    low, high = map(
        float, page.locator('svg[data-chart="rho"]').get_attribute("data-y-range").split()
    )
    assert low > -0.25 and high <= 1.0, f"rho: the range fits the data, not -1..1: {low}..{high}"
    # the timeline spans the page's content width
    timeline = page.locator('svg[data-chart="alert-timeline"]').bounding_box()
    main = page.locator("main").bounding_box()
    assert timeline is not None and main is not None
    assert timeline["width"] > 0.85 * main["width"]
    assert watch.errors == []


def test_rater_page_texts_are_clear_and_shares_have_no_thresholds(server, page) -> None:
    page, watch = page
    assert page.goto(f"{server.base_url}/projects/{DEMO.slug}/raters/r07").status == 200
    screenshot(page, "layout-rater")
    problems, measured = layout_problems(page)
    assert measured > 20
    assert problems == []
    # the first snapshots cannot measure self-agreement yet: their markers are each at their
    # own time, clear of the axis labels and of each other
    markers, count = marker_problems(page)
    assert count > 0 and markers == []
    for share in ("self_agreement", "random_choice"):
        svg = page.locator(f'svg[data-chart="{share}"]')
        assert svg.get_attribute("data-thresholds") == "", share
        assert page.locator(f'svg[data-chart="{share}"] [data-threshold]').count() == 0
    # one legend for the page (issue 27): its lines are the cards' Landis-Koch words (S against
    # the group), not Krippendorff's 0.667
    legend = page.locator('[data-legend="page"]').inner_text()
    assert "0.667" not in legend and "last 7 days" in legend and "cumulative" in legend
    assert "0.60 substantial" in legend
    assert watch.errors == []


def test_static_report_texts_are_clear(seeded_database: str, browser) -> None:
    engine = make_engine(seeded_database)
    try:
        html = render_report(project_detail(UnitOfWork(engine, read_only=True), DEMO.slug))
    finally:
        engine.dispose()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = Path(ARTIFACTS / "report.html")
    path.write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        screenshot(page, "layout-report")
        problems, measured = layout_problems(page)
        assert measured > 40
        assert problems == []
        assert marker_problems(page)[0] == []
    finally:
        context.close()


def _stress_page() -> str:
    """Charts drawn from the hardest inputs seen: a history whose last point is months after
    the rest (the un-anchored demo), values spanning the whole [-1, 1] range so both
    reference lines crowd, a constant share, long lane and rater names."""
    start = datetime(2024, 3, 4, tzinfo=UTC)
    crowded = [
        ChartPoint(start + timedelta(hours=6 * i), 0.70 + 0.002 * (i % 7)) for i in range(96)
    ]
    crowded.append(ChartPoint(start + timedelta(days=630), None, reason="no pairable item"))
    wide = [
        ChartPoint(start + timedelta(hours=i), -0.9 + 1.85 * (i % 2), -1.0, 1.0) for i in range(40)
    ]
    flat = [ChartPoint(start + timedelta(days=i), 0.0, 0.0, 0.0) for i in range(30)]
    lanes = [
        TimelineSpan(f"default:self_agreement_drop rater:annotator-with-a-long-name-{k}", state,
                     start + timedelta(days=d), start + timedelta(days=d + 3))
        for k in range(12) for d, state in ((0, "ok"), (3, "firing"), (6, "insufficient_data"))
    ]  # fmt: skip
    # The demo's first day: four snapshots a day, the first twelve undefined in both series,
    # values down to 0.01 so the axis is labelled "0.0" right where the markers begin.
    early = [
        ChartPoint(start + timedelta(hours=6 * i), None if i < 12 else 0.01 + 0.009 * (i - 12),
                   reason=None if i >= 12 else "no repeated presentations")
        for i in range(96)
    ]  # fmt: skip
    both_undefined = [ChartSeries("cumulative", "#1f77b4", early),
                      ChartSeries("last 7 days", "#ff7f0e", early, dashed=True)]  # fmt: skip
    names = [f"rater-{k:02d}-long-name" for k in range(12)]
    cells = [HeatCell(a, b, 0.5) for i, a in enumerate(names) for b in names[i + 1 :]]
    charts = [
        line_chart("crowded", [ChartSeries("cumulative", "#1f77b4", crowded)]),
        line_chart("wide", [ChartSeries("cumulative", "#1f77b4", wide),
                            ChartSeries("last 7 days", "#ff7f0e", wide, dashed=True)]),
        line_chart("flat", [ChartSeries("cumulative", "#1f77b4", flat)], thresholds=(),
                   bounds=(0.0, 1.0)),
        line_chart("empty", []),
        line_chart("undefined-start", both_undefined, thresholds=(), bounds=(0.0, 1.0)),
        timeline("lanes", lanes),
        heatmap("heat", names, cells),
    ]  # fmt: skip
    return (
        "<!doctype html><html><body style='margin: 10px'>"
        + "".join(f"<div style='margin: 8px'>{svg}</div>" for svg in charts)
        + "</body></html>"
    )


def test_hard_inputs_still_give_clear_texts(browser) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = Path(ARTIFACTS / "stress.html")
    path.write_text(_stress_page(), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        screenshot(page, "layout-stress")
        problems, measured = layout_problems(page)
        assert measured > 60
        assert problems == []
        crowded = page.locator('svg[data-chart="crowded"]')
        low, high = map(float, crowded.get_attribute("data-y-range").split())
        assert high - low < 0.2, "a range fitted to 0.70-0.712, not 0..1"
        assert page.locator('svg[data-chart="flat"] [data-threshold]').count() == 0
        markers, count = marker_problems(page)
        assert count >= 25 and markers == []
        labels = page.locator('svg[data-chart="undefined-start"] text').all_text_contents()
        assert "0.0" in labels
    finally:
        context.close()
