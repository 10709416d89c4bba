"""Who needs attention (issue 27): the ranking and the sentences, from plain values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.services.queries.attention import natural_key, needs_attention
from auditor.services.queries.dashboard import AlertChange, AlertStateView, Point

NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


def measure(value: float, low: float, high: float, n: int = 100) -> dict:
    return {"value": value, "ci_low": low, "ci_high": high, "n": n}


def good(n_repeats: int = 50) -> dict:
    return {
        "reliability": measure(0.9, 0.85, 0.95),
        "self_agreement": measure(0.9, 0.85, 0.95),
        "s_vs_group": measure(0.9, 0.86, 0.94),
        "n_repeated_items": n_repeats,
        "repeats_needed": {"value": 40},
    }


def snapshot(**raters: dict) -> dict:
    return {"raters": raters, "models": {}}


def test_nothing_needs_attention_when_every_rater_is_steady() -> None:
    latest = snapshot(r1=good(), r2=good())
    found = needs_attention(
        latest=latest, window=latest, window_before=latest, window_title="last 7 days", as_of=NOW
    )
    assert found == []


def test_a_firing_alert_comes_before_a_drop_and_says_since_when() -> None:
    latest = snapshot(r2=good(), r10=good(), r3=good())
    window = snapshot(r2=good(), r10=good(), r3={**good(), "s_vs_group": measure(0.6, 0.5, 0.7)})
    since = NOW - timedelta(days=2)
    states = [
        AlertStateView("p:default:self_agreement_drop", "rater:r10", "firing", since, 0.5, "")
    ]
    changes = [
        AlertChange("p:default:self_agreement_drop", "rater:r10", since, "ok", "firing", 0.5, "")
    ]
    found = needs_attention(
        latest=latest,
        window=window,
        window_before=latest,
        window_title="last 7 days",
        states=states,
        changes=changes,
        rule_metrics={"p:default:self_agreement_drop": "self_agreement"},
        as_of=NOW,
    )
    assert [a.subject for a in found] == ["r10", "r3"]
    assert "self agreement drop alert is firing since 2026-11-25 12:00 UTC" in found[0].sentence
    assert found[0].episodes[0].start == since and found[0].episodes[0].end is None
    sentence = found[1].sentence
    assert "Agreement with the group fell to 0.60" in sentence and "from 0.90" in sentence
    assert "clearly" in sentence


def test_a_small_fall_within_the_noise_is_not_listed() -> None:
    latest = snapshot(r1=good())
    window = snapshot(r1={**good(), "s_vs_group": measure(0.78, 0.5, 0.95)})
    found = needs_attention(
        latest=latest, window=window, window_before=None, window_title="last 7 days", as_of=NOW
    )
    assert found == []


def test_a_repeat_coverage_alert_is_weighed_as_too_few_repeats_not_as_firing() -> None:
    latest = snapshot(r1=good(n_repeats=10), r2={**good(), "grade_bias": measure(0.6, 0.4, 0.8)})
    states = [AlertStateView("p:default:repeat_coverage", "rater:r1", "firing", NOW, 0.2, "")]
    found = needs_attention(
        latest=latest,
        window=latest,
        window_before=latest,
        window_title="last 7 days",
        states=states,
        rule_metrics={"p:default:repeat_coverage": "repeat_coverage"},
        as_of=NOW,
    )
    assert [a.subject for a in found] == ["r2", "r1"]
    assert "above the others" in found[0].sentence
    assert found[1].minor and "10 repeated items of the 40" in found[1].sentence


def test_a_fall_she_recovered_from_is_still_listed_after_the_bad_week() -> None:
    values = [0.95, 0.94, 0.6, 0.55, 0.7, 0.93, 0.95]
    series = [
        Point(NOW - timedelta(days=7 - i), v, v - 0.05, v + 0.05, 100, None)
        for i, v in enumerate(values)
    ]
    latest = snapshot(r7=good())
    found = needs_attention(
        latest=latest,
        window=latest,
        window_before=latest,
        window_title="last 7 days",
        as_of=NOW,
        recent={("human", "r7"): {"s_vs_group": series}},
    )
    assert [a.subject for a in found] == ["r7"]
    assert "fell from 0.95 to 0.55" in found[0].sentence and "is back at 0.95" in found[0].sentence


def test_natural_order() -> None:
    assert sorted(["r10", "r2", "r1", "model"], key=natural_key) == ["model", "r1", "r2", "r10"]
