"""A measure cell of the dashboard says why an interval is missing (issue 10, item 3)."""

from __future__ import annotations

from auditor.presentation.pages import Renderer


def _cell(measure: dict) -> str:
    template = Renderer().env.from_string('{% from "macros.html" import measure %}{{ measure(m) }}')
    return template.render(m=measure)


def test_a_missing_interval_carries_its_reason_in_the_tooltip() -> None:
    base = {"value": 0.61, "n": 400, "band": "substantial", "reason": None}
    missing = _cell(
        {
            **base,
            "ci_low": None,
            "ci_high": None,
            "ci_reason": "too many rater-set patterns to bootstrap; use the jackknife",
        }
    )
    assert "no interval: too many rater-set patterns" in missing
    assert "0.610" in missing
    present = _cell({**base, "ci_low": 0.5, "ci_high": 0.7, "ci_reason": None})
    assert "no interval" not in present and "[0.500, 0.700]" in present
