"""Undefined points sit on the x axis at their own times: a run of them is one capsule with
a dot per point (not a chain of overprinting circles), a lone one a hollow circle, and the
first time sits clear of the value labels left of the plot."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta

from auditor.charts import ChartPoint, ChartSeries, line_chart

START = datetime(2024, 3, 4, tzinfo=UTC)


def _circles(svg: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'([\w-]+)="([^"]*)"', c)) for c in re.findall(r"<circle [^>]*>", svg)]


def test_a_run_is_one_capsule_with_a_dot_per_point_and_a_lone_one_a_circle() -> None:
    values = [None] * 12 + [0.5] * 20 + [None] + [0.6] * 10
    points = [
        ChartPoint(START + timedelta(hours=6 * i), v, reason="r") for i, v in enumerate(values)
    ]
    svg = line_chart("m", [ChartSeries("cumulative", "#000", points)], thresholds=())
    undefined = [c for c in _circles(svg) if c["data-value"] == ""]
    assert len(undefined) == 13 and svg.count("data-undefined-run=") == 1
    xs = [float(c["cx"]) for c in undefined]
    assert xs == sorted(xs) and len(set(xs)) == 13  # each at its own time
    run, lone = undefined[:12], undefined[12]
    # dots of the run do not touch: centres further apart than their diameters
    gaps = [b - a for a, b in itertools.pairwise(xs[:12])]
    assert min(gaps) > 2 * max(float(c["r"]) for c in run)
    assert lone["r"] == "3.5" and lone["fill"] == "white"
    capsule = dict(re.findall(r'([\w-]+)="([^"]*)"', re.search(r"<rect [^>]*>", svg)[0]))
    left, width = float(capsule["x"]), float(capsule["width"])
    assert left < xs[0] and left + width > xs[11] and left + width < xs[12]
    # the value labels end 6 px left of the plot (x = 42); the first marker starts well after
    assert xs[0] - 3.5 >= 48 + 6
