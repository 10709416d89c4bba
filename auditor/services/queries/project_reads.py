"""Read services of the HTTP API beyond ``history.py``: lists (raters, items, sessions,
snapshots), one snapshot by id, the downsampled history and the rater report.

Every read is scoped by project slug; an id of another project is simply not found.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from auditor.errors import Invalid, NotFound
from auditor.services.queries.history import (
    SNAPSHOT_METADATA,
    explain_empty_series,
    project_id_for,
    reversed_pair,
    scope_name,
)
from auditor.snapshots.points import parse_subject
from auditor.snapshots.scopes import CUMULATIVE
from auditor.stats.catalogue import names_for
from auditor.storage.read_records import (
    HistoryPointRow,
    ItemRow,
    RaterLabelsRow,
    SessionRow,
    SnapshotSummaryRow,
)
from auditor.storage.unit_of_work import UnitOfWork


def list_raters(uow: UnitOfWork, slug: str, after: str | None, limit: int) -> list[RaterLabelsRow]:
    with uow:
        return uow.reads.list_raters(project_id_for(uow, slug), after, limit)


def get_rater(uow: UnitOfWork, slug: str, rater: str) -> RaterLabelsRow:
    with uow:
        found = uow.reads.find_rater(project_id_for(uow, slug), rater)
    if found is None:
        raise NotFound(f"project {slug!r} has no rater {rater!r}")
    return found


def list_items(uow: UnitOfWork, slug: str, after: str | None, limit: int) -> list[ItemRow]:
    with uow:
        return uow.reads.list_items(project_id_for(uow, slug), after, limit)


def get_item(uow: UnitOfWork, slug: str, item: str) -> ItemRow:
    with uow:
        found = uow.reads.find_item(project_id_for(uow, slug), item)
    if found is None:
        raise NotFound(f"project {slug!r} has no item {item!r}")
    return found


def list_sessions(
    uow: UnitOfWork, slug: str, rater: str | None, after: int | None, limit: int
) -> list[SessionRow]:
    with uow:
        return uow.reads.list_sessions(project_id_for(uow, slug), rater, after, limit)


def list_snapshots(
    uow: UnitOfWork, slug: str, scope: str | None, before: int | None, limit: int
) -> list[SnapshotSummaryRow]:
    name = scope_name(scope) if scope is not None else None
    with uow:
        return uow.reads.list_snapshots(project_id_for(uow, slug), name, before, limit)


def get_snapshot(uow: UnitOfWork, slug: str, snapshot_id: int) -> dict[str, Any]:
    """One snapshot in full: the ``auditor stats --json`` shape plus its metadata."""
    with uow:
        found = uow.reads.find_snapshot(project_id_for(uow, slug), snapshot_id)
    if found is None:
        raise NotFound(f"project {slug!r} has no snapshot {snapshot_id}")
    metadata = {key: getattr(found, key) for key in SNAPSHOT_METADATA}
    for key in ("as_of", "computed_at", "window_start", "window_end"):
        if metadata[key] is not None:  # as ``queries.snapshot_view`` renders them
            metadata[key] = metadata[key].isoformat()
    metadata["project"] = slug
    return {**found.result, "snapshot": metadata}


def history(
    uow: UnitOfWork,
    slug: str,
    metric: str,
    *,
    subject: str | None,
    scopes: list[str] | None,
    since: datetime | None,
    until: datetime | None,
    max_points: int,
) -> list[HistoryPointRow]:
    """A metric's series, at most ``max_points`` per scope (last value per time bucket)."""
    try:
        kind, subject_id = parse_subject(subject)
    except ValueError as error:
        raise Invalid(str(error)) from None
    if since is not None and until is not None and since > until:
        return []  # an empty range: nothing in it (not an error for a range query)
    if max_points < 1:
        raise Invalid("points must be at least 1")
    names = [scope_name(s) for s in scopes] if scopes else None
    with uow:
        project_id = project_id_for(uow, slug)
        rows = uow.reads.downsampled_history(
            project_id, metric, kind, subject_id, names, since, until, max_points
        )
        other = reversed_pair(kind, subject_id)
        if not rows and other is not None:
            rows = uow.reads.downsampled_history(
                project_id, metric, kind, other, names, since, until, max_points
            )
        if not rows:
            explain_empty_series(uow, slug, project_id, metric, kind, subject_id, names)
        return rows


def rater_measures(measures: dict[str, Any]) -> dict[str, Any]:
    """A rater's measure of every computed rater metric of the catalogue (None: not in the
    snapshot)."""
    return {name: measures.get(name) for name in names_for("rater", from_stats=True)}


def rater_report(uow: UnitOfWork, slug: str, rater: str, max_points: int = 200) -> dict[str, Any]:
    """What the latest cumulative snapshot says about one rater: self-agreement,
    random-choice share, S against the group (models: S and kappa_VA), the rater's row of
    pairwise Cohen kappa, and the history of each of those rater metrics.

    The rater metrics are the metric catalogue's computed ones, read per call: one more in
    the catalogue is one more key here (and in the API's ``RaterReport``)."""
    rater_metrics = names_for("rater", from_stats=True)
    model_metrics = names_for("model", from_stats=True)
    with uow:
        project_id = project_id_for(uow, slug)
        found = uow.reads.find_rater(project_id, rater)
        if found is None:
            raise NotFound(f"project {slug!r} has no rater {rater!r}")
        latest = uow.snapshots.snapshot_at(project_id, CUMULATIVE, None)
        result = latest["result"] if latest is not None else {}
        measures = dict(result.get("raters", {}).get(rater, {}))
        model = result.get("models", {}).get(rater)
        cohen = []
        for pair in result.get("pairwise_cohen", []):
            if rater in (pair["rater_a"], pair["rater_b"]):
                other = pair["rater_b"] if pair["rater_a"] == rater else pair["rater_a"]
                cohen.append({"rater": other, "n_items": pair["n_items"], **pair["kappa"]})
        series: dict[str, list[HistoryPointRow]] = {}
        kind = "model" if found.kind == "model" else "rater"
        for metric in rater_metrics + (model_metrics if kind == "model" else ()):
            subject_kind = "rater" if metric in rater_metrics else "model"
            series[metric] = uow.reads.downsampled_history(project_id, metric, subject_kind, rater,
                [CUMULATIVE], None, None, max_points,
            )  # fmt: skip
    return {
        "rater": rater,
        "kind": found.kind,
        "labels": found.labels,
        "snapshot_id": latest["id"] if latest is not None else None,
        "as_of": latest["as_of"] if latest is not None else None,
        **rater_measures(measures),
        "n_repeated_items": measures.get("n_repeated_items"),
        "model": model,
        "pairwise_cohen": sorted(cohen, key=lambda row: str(row["rater"])),
        "history": series,
    }


def metrics_facts(uow: UnitOfWork) -> dict[str, Any]:
    """What GET /metrics exposes, read fresh at scrape time from the database."""
    with uow:
        facts: dict[str, Any] = {
            "points": uow.reads.latest_points(),
            "recomputes": uow.reads.recompute_facts(),
            "labels": uow.reads.label_counts(),
            "alerts": [],
            "outbox": {},
        }
        for project in sorted(uow.projects.all(), key=lambda p: p.id):
            for state in uow.alerts.list_states(project.id):
                facts["alerts"].append({"slug": project.slug, **dataclasses.asdict(state)})
            facts["outbox"][project.slug] = uow.alert_log.outbox_counts(project.id)
        return facts
