"""Turn one rendered measure set (the ``auditor stats --json`` shape) into narrow metric points.

The points table is what history queries and charts read: one row per (metric, subject) with
its value, interval and count. Working from the public JSON shape rather than from the stats
objects keeps this module tied to the documented contract only.

Subjects:
    project  ""            every entry of ``measures``
    rater    rater id      ``self_agreement``, ``self_kappa``, ``reliability``,
                           ``random_choice``, ``s_vs_group``
    model    rater id      ``s``, ``kappa_va``
    pair     "a|b"         ``cohen_kappa``, on ordinal scales ``cohen_w`` (a, b as the stats
                           listed them)

Per-category measures (``category_share``, ``specific_agreement``: a mapping of category to
measure under ``measures``) stay in the snapshot's JSON; they have no points.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SUBJECT_KINDS = ("project", "rater", "model", "pair")
PAIR_METRIC = "cohen_kappa"
WEIGHTED_PAIR_METRIC = "cohen_w"
PAIR_SEPARATOR = "|"


@dataclass(frozen=True)
class MetricPoint:
    metric: str
    subject_kind: str
    subject_id: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None

    def as_row(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "subject_kind": self.subject_kind,
            "subject_id": self.subject_id,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "reason": self.reason,
        }


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        # The stats contract says undefined is None with a reason; a NaN here is a bug upstream.
        raise ValueError(f"{where} is {number}, expected a finite number or null")
    return number


def _point(metric: str, kind: str, subject: str, measure: Mapping[str, Any]) -> MetricPoint:
    where = f"{kind} {subject!r} metric {metric!r}"
    n = measure.get("n")
    return MetricPoint(
        metric=metric,
        subject_kind=kind,
        subject_id=subject,
        value=_number(measure.get("value"), f"{where} value"),
        ci_low=_number(measure.get("ci_low"), f"{where} ci_low"),
        ci_high=_number(measure.get("ci_high"), f"{where} ci_high"),
        n=None if n is None else int(n),
        reason=measure.get("reason"),
    )


def _is_measure(value: Any) -> bool:
    return isinstance(value, Mapping) and "value" in value


def points_from_stats_dict(rendered: Mapping[str, Any]) -> list[MetricPoint]:
    """Every measure of a rendered measure set as a flat list of points.

    Parameters
    ----------
    rendered : mapping
        The dict of ``auditor.stats.export.measure_set_to_dict``.

    Returns
    -------
    list of MetricPoint, in a stable order (project, raters, models, pairs).
    """
    points = [
        _point(name, "project", "", measure)
        for name, measure in rendered.get("measures", {}).items()
        if _is_measure(measure)
    ]
    for kind, section in (("rater", "raters"), ("model", "models")):
        for subject, metrics in rendered.get(section, {}).items():
            points.extend(
                _point(name, kind, str(subject), measure)
                for name, measure in metrics.items()
                if _is_measure(measure)
            )
    for pair in rendered.get("pairwise_cohen", []):
        subject = f"{pair['rater_a']}{PAIR_SEPARATOR}{pair['rater_b']}"
        measure = dict(pair["kappa"])
        if measure.get("n") is None:
            measure["n"] = pair.get("n_items")
        points.append(_point(PAIR_METRIC, "pair", subject, measure))
        if _is_measure(pair.get("cohen_w")):  # ordinal scales
            weighted = dict(pair["cohen_w"])
            if weighted.get("n") is None:
                weighted["n"] = pair.get("n_items")
            points.append(_point(WEIGHTED_PAIR_METRIC, "pair", subject, weighted))
    return points


def parse_subject(text: str | None) -> tuple[str, str]:
    """``None`` or ``"project"`` -> ("project", ""); ``"rater:ID"`` -> ("rater", "ID"), etc."""
    if text is None or text == "project":
        return ("project", "")
    kind, sep, subject = text.partition(":")
    if not sep or kind not in SUBJECT_KINDS or not subject:
        raise ValueError(
            f"subject must be 'project', 'rater:ID', 'model:ID' or 'pair:A|B', got {text!r}"
        )
    return (kind, subject)
