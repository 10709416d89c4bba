"""The public JSON shape of a ``MeasureSet`` (issue 3 item 4; reused by ``auditor snapshot``)."""

from __future__ import annotations

from typing import Any

from auditor.stats.results import PROJECT_MEASURES, Measure, MeasureSet


def measure_to_dict(measure: Measure) -> dict[str, Any]:
    """{"value", "ci_low", "ci_high", "ci_reason", "n", "band", "reason"}: exactly these keys.

    ``ci_reason`` says why an interval that was asked for is missing (None otherwise).
    """
    return {
        "value": measure.value,
        "ci_low": measure.ci_low,
        "ci_high": measure.ci_high,
        "ci_reason": measure.ci_reason if measure.ci_low is None else None,
        "n": measure.n,
        "band": measure.band,
        "reason": measure.reason,
    }


def measure_set_to_dict(ms: MeasureSet) -> dict[str, Any]:
    """The documented contract; rater and model keys are the names from ``LabelArrays``."""
    return {
        "n_labels": ms.n_labels,
        "n_items": ms.n_items,
        "n_raters": ms.n_raters,
        "n_pairable_items": ms.n_pairable_items,
        "categories": list(ms.categories),
        "measures": {name: measure_to_dict(ms.measures[name]) for name in PROJECT_MEASURES},
        "raters": {
            r.rater: {
                "self_agreement": measure_to_dict(r.self_agreement),
                "self_kappa": measure_to_dict(r.self_kappa),
                "reliability": measure_to_dict(r.reliability),
                "random_choice": measure_to_dict(r.random_choice),
                "s_vs_group": measure_to_dict(r.s_vs_group),
                "n_repeated_items": r.n_repeated_items,
            }
            for r in ms.raters
        },
        "models": {
            m.rater: {"s": measure_to_dict(m.s), "kappa_va": measure_to_dict(m.kappa_va)}
            for m in ms.models
        },
        "pairwise_cohen": [
            {
                "rater_a": p.rater_a,
                "rater_b": p.rater_b,
                "kappa": measure_to_dict(p.kappa),
                "n_items": p.n_items,
            }
            for p in ms.pairwise_cohen
        ],
    }
