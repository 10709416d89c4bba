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

Which names may stand where is the typed measure set's (``auditor.stats``: the project measures,
the fields of ``RaterResult`` and ``ModelResult``). An entry this module does not know is an
error naming it, never a silently missing point (a measure without a point has no chart and no
alert rule; issue 23).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auditor.domain import split_subject
from auditor.stats.export import MODEL_STATS, RATER_STATS
from auditor.stats.results import CATEGORY_MEASURES, PROJECT_MEASURES

SUBJECT_KINDS = ("project", "rater", "model", "pair")
PAIR_METRIC = "cohen_kappa"
WEIGHTED_PAIR_METRIC = "cohen_w"
PAIR_SEPARATOR = "|"
# The entries of a rater's section that are counts and tables, not measures.
RATER_EXTRAS = ("n_repeated_items", "confusion", "confusion_n")
MEASURE_KEYS = frozenset({"value", "ci_low", "ci_high", "ci_reason", "n", "band", "reason"})


@dataclass(frozen=True)
class ComputedPoint:
    """One point as computed from a measure set, before it is stored (a row of the
    ``metric_points`` table, ``auditor.storage.snapshot_models.MetricPoint``)."""

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


def _point(metric: str, kind: str, subject: str, measure: Mapping[str, Any]) -> ComputedPoint:
    where = f"{kind} {subject!r} metric {metric!r}"
    n = measure.get("n")
    return ComputedPoint(
        metric=metric,
        subject_kind=kind,
        subject_id=subject,
        value=_number(measure.get("value"), f"{where} value"),
        ci_low=_number(measure.get("ci_low"), f"{where} ci_low"),
        ci_high=_number(measure.get("ci_high"), f"{where} ci_high"),
        n=None if n is None else int(n),
        reason=measure.get("reason"),
    )


def _measures(
    section: Mapping[str, Any], known: tuple[str, ...], where: str, skipped: tuple[str, ...] = ()
) -> list[tuple[str, Mapping[str, Any]]]:
    """The (name, measure) entries of one section, checked against the typed measure set."""
    found = []
    for name, measure in section.items():
        if name in skipped:
            continue
        if name not in known:
            raise ValueError(
                f"{where} has an entry {name!r} that is no measure of the statistics "
                f"(known: {', '.join(known)}): no point would be written for it"
            )
        if not isinstance(measure, Mapping) or "value" not in measure:
            raise ValueError(f"{where} entry {name!r} is not a measure (value, ci_low, ...)")
        unknown = sorted(set(measure) - MEASURE_KEYS)
        if unknown:
            raise ValueError(f"{where} entry {name!r} has unknown fields {unknown}")
        found.append((name, measure))
    return found


def points_from_stats_dict(rendered: Mapping[str, Any]) -> list[ComputedPoint]:
    """Every measure of a rendered measure set as a flat list of points.

    Parameters
    ----------
    rendered : mapping
        The dict of ``auditor.stats.export.measure_set_to_dict``.

    Returns
    -------
    list of ComputedPoint, in a stable order (project, raters, models, pairs).

    Raises
    ------
    ValueError
        An entry the statistics do not define, or a measure of another shape (it would
        otherwise vanish without a point), or a value that is not finite.
    """
    measures = rendered.get("measures", {})
    points = [
        _point(name, "project", "", measure)
        for name, measure in _measures(measures, PROJECT_MEASURES, "measures", CATEGORY_MEASURES)
    ]
    for kind, section, known, extras in (
        ("rater", "raters", RATER_STATS, RATER_EXTRAS),
        ("model", "models", MODEL_STATS, ()),
    ):
        for subject, metrics in rendered.get(section, {}).items():
            where = f"{section}[{str(subject)!r}]"
            points.extend(
                _point(name, kind, str(subject), measure)
                for name, measure in _measures(metrics, known, where, extras)
            )
    for pair in rendered.get("pairwise_cohen", []):
        subject = f"{pair['rater_a']}{PAIR_SEPARATOR}{pair['rater_b']}"
        measure = dict(pair["kappa"])
        if measure.get("n") is None:
            measure["n"] = pair.get("n_items")
        points.append(_point(PAIR_METRIC, "pair", subject, measure))
        if pair.get("cohen_w") is not None:  # ordinal scales
            weighted = dict(pair["cohen_w"])
            if weighted.get("n") is None:
                weighted["n"] = pair.get("n_items")
            points.append(_point(WEIGHTED_PAIR_METRIC, "pair", subject, weighted))
    return points


def parse_subject(text: str | None) -> tuple[str, str]:
    """``None`` or ``"project"`` -> ("project", ""); ``"rater:ID"`` -> ("rater", "ID"), etc."""
    if text is None:
        return ("project", "")
    found = split_subject(text, set(SUBJECT_KINDS))
    if found is None:
        raise ValueError(
            f"subject must be 'project', 'rater:ID', 'model:ID' or 'pair:A|B', got {text!r}"
        )
    return found
