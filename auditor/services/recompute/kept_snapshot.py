"""A project's cumulative snapshot from its kept statistics (issue 22).

From ``kept_snapshot_labels`` labels on, a recompute does not read every label: the kept
statistics (``services/recompute/kept.py``) are brought up to date from the labels since their
watermark, and the cumulative snapshot is read from them (``auditor.stats.kept_measures``), its
intervals a delete-a-group jackknife. What the kept sums do not cover
(``KeptMeasureSet.missing``) is carried, and said to be, from the latest snapshot computed from
every label (a *full pass*). A full pass runs again when due: at most every
``kept_full_pass_seconds``, and never more than a tenth of the time (ten of its own durations
apart), so at 10M labels (about 70 s a full pass) it costs a tenth of a core at most.

Carried parts get no metric points (their charts show the full passes, each value once) and
no alert evaluation: a sequential test fed the same observation again would count it twice.
Rolling windows are not kept: each reads its own labels through the labeled_at index, a cost
that follows what the window holds, not what the project holds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from auditor.domain import IntervalMethod, ProjectSettings
from auditor.services.recompute.kept import KeptUpdate, Layout, state_of
from auditor.services.recompute.kept_verify import in_id_order, reordered
from auditor.snapshots.scopes import CUMULATIVE
from auditor.stats.export import MODEL_STATS, measure_set_to_dict
from auditor.stats.kept_measures import KeptMeasureSet, kept_measure_set
from auditor.storage.unit_of_work import UnitOfWork

SOURCE_KEY = "source"
# A full pass at most this share of the time: ten of its own durations apart.
FULL_PASS_SPACING = 10.0
NOT_YET = "not computed yet for this rater: the next recompute from every label reports it"

_POINT_KIND = {"measures": "project", "by_category": "project", "raters": "rater"}
_PAIR_METRICS = ("cohen_kappa", "cohen_w")


@dataclass(frozen=True)
class FullPass:
    """The latest cumulative snapshot computed from every label."""

    snapshot_id: int
    computed_at: datetime
    duration_ms: float
    n_labels: int
    settings: dict[str, Any]


def wanted(settings: ProjectSettings, label_count: int, threshold: int) -> bool:
    """Is this project's cumulative snapshot served from its kept statistics? Bootstrap
    intervals resample items, which sums cannot: those projects read every label."""
    return label_count >= threshold and settings.interval_method != IntervalMethod.BOOTSTRAP


def latest_full_pass(uow: UnitOfWork, project_id: int, scope: str = CUMULATIVE) -> FullPass | None:
    """The newest snapshot of ``scope`` computed from every label: the newest snapshot
    itself, or the one its ``source`` names."""
    latest = uow.snapshots.snapshot_parts_at(project_id, scope, None, [SOURCE_KEY])
    if latest is None:
        return None
    source = latest["result"].get(SOURCE_KEY)
    full_id = latest["id"] if source is None else source.get("full_pass")
    if full_id is None:
        return None
    row = uow.snapshots.snapshot_facts(int(full_id))
    if row is None:
        return None
    return FullPass(
        int(row["id"]),
        row["computed_at"],
        float(row["duration_ms"]),
        int(row["n_labels"]),
        dict(row["settings"] or {}),
    )


def full_pass_due(
    last: FullPass | None, now: datetime, every_seconds: float, settings: dict[str, Any]
) -> bool:
    """``now`` is the wall clock (``computed_at`` is); ``settings`` the project's settings
    as a snapshot records them: a full pass under other settings (a scale, a collapse policy,
    an interval level) has nothing to carry."""
    if last is None or last.settings != settings:
        return True
    elapsed = (now - last.computed_at).total_seconds()
    return elapsed >= max(every_seconds, FULL_PASS_SPACING * last.duration_ms / 1000.0)


@dataclass(frozen=True)
class KeptScope:
    """The cumulative scope as the kept statistics give it."""

    rendered: dict[str, Any]
    carried: frozenset[tuple[str, str]]  # (subject kind, metric) of the carried parts
    watermark: int
    label_count: int
    seconds: float


def compute(
    uow: UnitOfWork,
    project_id: int,
    settings: ProjectSettings,
    full: FullPass,
    scope: str = CUMULATIVE,
    held: KeptUpdate | None = None,
) -> KeptScope | None:
    """The measure set of ``scope`` from its kept state (``held``: the one the update just
    stored, else read), carried parts from ``full``; None when there is no kept state (the
    caller reads every label)."""
    started = time.process_time()
    with uow:
        rater_names, category_names = uow.kept.names(project_id)
        layout: Layout | None
        if held is not None and held.state is not None and held.layout is not None:
            stored, layout = held.state, held.layout
            watermark, label_count = held.watermark, held.label_count or 0
        else:
            record = uow.kept.load(project_id, scope)
            layout = None if record is None else Layout.parse(record.signature)
            if record is None or layout is None:
                return None
            stored = state_of(record, layout)
            watermark, label_count = record.watermark, record.label_count
    full_result: dict[str, Any] = {}
    # raters, models and pairs listed as compute_measures lists them: by rater id
    state, ids = in_id_order(stored, layout)
    total = state.total()
    # a window lists the raters it holds (those whose labels all left it keep zero rows)
    present = [slot for slot in range(state.n_raters) if total.rater_labels[0, slot] > 0]
    if len(present) < state.n_raters:
        state = reordered(state, present)
    raters = [ids[slot] for slot in present]
    models = set(layout.models)
    found = kept_measure_set(
        state,
        rater_names=tuple(rater_names[r] for r in raters),
        is_model=np.array([r in models for r in raters], dtype=bool),
        categories=tuple(category_names[c] for c in layout.categories),
        settings=settings,
        n_labels=round(float(total.labels[0])),
        n_items=round(float(total.items[0])),
    )
    if found.missing:  # the full pass's result is read only when something is carried
        with uow:
            row = uow.snapshots.snapshot_by_id(full.snapshot_id)
        full_result = {} if row is None else dict(row["result"])
    rendered, carried = carry(found, full_result)
    rendered[SOURCE_KEY] = {
        "statistics": "kept",
        "groups": layout.groups,
        "full_pass": full.snapshot_id,
        "full_pass_computed_at": full.computed_at.isoformat(),
        "full_pass_n_labels": full.n_labels,
        "carried": list(found.missing),
    }
    return KeptScope(rendered, carried, watermark, label_count, time.process_time() - started)


def carry(
    found: KeptMeasureSet, source: dict[str, Any]
) -> tuple[dict[str, Any], frozenset[tuple[str, str]]]:
    """The rendered kept measure set with each missing part taken from ``source`` (the full
    pass's result), and the (subject kind, metric) of those parts."""
    rendered = measure_set_to_dict(found.measures)
    carried: set[tuple[str, str]] = set()
    for part in found.missing:
        section, _, name = part.partition(".")
        if section in ("measures", "by_category"):
            if name in source.get("measures", {}):
                rendered["measures"][name] = source["measures"][name]
            carried.add((_POINT_KIND[section], name))
        elif section == "raters":
            before = source.get("raters", {})
            for rater, metrics in rendered.get("raters", {}).items():
                if name in before.get(rater, {}):
                    metrics[name] = before[rater][name]
                elif isinstance(metrics.get(name), dict) and metrics[name].get("value") is None:
                    metrics[name] = {**metrics[name], "reason": NOT_YET}
            carried.add(("rater", name))
        elif section == "models":
            rendered["models"] = source.get("models", {})
            carried.update(("model", metric) for metric in MODEL_STATS)
        elif section == "pairwise_cohen":
            rendered["pairwise_cohen"] = source.get("pairwise_cohen", [])
            carried.update(("pair", metric) for metric in _PAIR_METRICS)
        else:
            raise ValueError(f"unknown part of a measure set: {part!r}")
    return rendered, frozenset(carried)


def carried_metrics(carried: frozenset[tuple[str, str]]) -> frozenset[str]:
    return frozenset(metric for _, metric in carried)
