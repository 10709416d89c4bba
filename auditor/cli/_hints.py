"""What to do when there is nothing to show yet: the empty states of ``snapshot`` and
``history`` say how to get the first snapshot instead of only that there is none."""

from __future__ import annotations

from auditor.cli._common import unit_of_work
from auditor.config import get_settings
from auditor.errors import NotFound
from auditor.services.projects.projects import show_project
from auditor.services.queries.history import snapshot_counts


def how_to_get_a_snapshot(project: str, scope: str | None = None) -> str | None:
    """One line on how ``project`` gets its first snapshot (of ``scope``, or of any scope),
    or None when it has one or there is no such project (the caller's own error says so)."""
    try:
        view = show_project(unit_of_work(read_only=True), project)
        counts = snapshot_counts(unit_of_work(read_only=True), project)
    except NotFound:
        return None
    if (counts.get(scope, 0) if scope is not None else sum(counts.values())) > 0:
        return None
    what = f"no {scope} snapshot" if scope is not None else "no snapshot"
    labels = (view.counts or {}).get("labels", 0)
    if labels == 0:
        return (
            f"project {project!r} has no labels yet, so {what}: import some "
            f"(`auditor import {project} FILE`, or POST /api/v1/projects/{project}/labels), "
            f"then run `auditor recompute {project}`"
        )
    settings = get_settings()
    every = f"{settings.scan_interval_seconds:g} s"
    scheduler = (
        f"Celery beat scans every {every}"
        if settings.broker_url
        else f"`auditor run` or `auditor serve` scan every {every}"
    )
    return (
        f"project {project!r} has {labels} labels but {what} yet: run "
        f"`auditor recompute {project}` now, or the scheduler computes it within its "
        f"interval ({scheduler})"
    )
