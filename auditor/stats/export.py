"""The public JSON shape of a ``MeasureSet`` (issue 3 item 4; reused by ``auditor snapshot``)."""

from __future__ import annotations

from typing import Any

from auditor.stats.catalogue import names_for
from auditor.stats.results import (
    CATEGORY_MEASURES,
    PROJECT_MEASURES,
    CohenPair,
    Measure,
    MeasureSet,
    RaterResult,
)

# The per-rater and per-model sections: the catalogue's metrics computed here (each one a
# field of ``RaterResult`` / ``ModelResult`` of the same name).
RATER_STATS = names_for("rater", from_stats=True)
MODEL_STATS = names_for("model", from_stats=True)


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


def _rater(r: RaterResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        name: measure_to_dict(getattr(r, name))
        for name in RATER_STATS
        if getattr(r, name) is not None  # grade_bias: ordinal scales only
    }
    out["n_repeated_items"] = r.n_repeated_items
    if r.confusion:
        out["confusion"] = [list(row) for row in r.confusion]
        out["confusion_n"] = list(r.confusion_n)
    return out


def _pair(p: CohenPair) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rater_a": p.rater_a,
        "rater_b": p.rater_b,
        "kappa": measure_to_dict(p.kappa),
        "n_items": p.n_items,
    }
    if p.cohen_w is not None:
        out["cohen_w"] = measure_to_dict(p.cohen_w)
    return out


def measure_set_to_dict(ms: MeasureSet) -> dict[str, Any]:
    """The documented contract; rater and model keys are the names from ``LabelArrays``.

    ``measures`` holds the project measures (the weighted ones only on an ordinal scale) and,
    per category name, ``category_share`` and ``specific_agreement``; ``scale`` and
    ``weights`` say which coefficients are there.
    """
    measures: dict[str, Any] = {
        name: measure_to_dict(ms.measures[name]) for name in PROJECT_MEASURES if name in ms.measures
    }
    for name in CATEGORY_MEASURES:
        if name in ms.by_category:
            measures[name] = {c: measure_to_dict(m) for c, m in ms.by_category[name].items()}
    return {
        "n_labels": ms.n_labels,
        "n_items": ms.n_items,
        "n_raters": ms.n_raters,
        "n_pairable_items": ms.n_pairable_items,
        "categories": list(ms.categories),
        "scale": ms.scale.value,
        "weights": None if ms.weights is None else ms.weights.value,
        "measures": measures,
        "raters": {r.rater: _rater(r) for r in ms.raters},
        "models": {
            m.rater: {name: measure_to_dict(getattr(m, name)) for name in MODEL_STATS}
            for m in ms.models
        },
        "pairwise_cohen": [_pair(p) for p in ms.pairwise_cohen],
    }
