"""The service's main job: find dirty projects, and recompute one project into snapshots.

``recompute_project`` is one unit of work: under the project's lock it decides which scopes
are dirty, loads the labels once as arrays, computes each dirty scope, and writes every
snapshot with all its metric points in ONE transaction (insert-or-nothing on
(project, scope, tick)). A worker killed at any point leaves either everything or nothing, and
a redelivered or duplicated task finds nothing to do.

Test-only: ``AUDITOR_TEST_RECOMPUTE_DELAY`` (seconds, float) makes every recompute sleep after
the load and before the write, so process tests can kill a worker or terminate database
backends in the middle of a recompute. It is read from the environment on each call and has
no other effect; never set it in production.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

import numpy as np

import auditor
from auditor.config import get_settings
from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings
from auditor.errors import Failure, NotFound
from auditor.services.alerts.evaluation import evaluate_snapshots
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute import kept_snapshot
from auditor.services.recompute.kept import KeptUpdate, Span, update_kept
from auditor.services.recompute.label_studio_points import rejection_points
from auditor.services.recompute.repeat_coverage import add_coverage
from auditor.snapshots.dirty import (
    LastSnapshot,
    ProjectFacts,
    ScopeDecision,
    decide,
    emptied,
    has_new_labels,
    moved_ranges,
)
from auditor.snapshots.empty import explain_empty_window
from auditor.snapshots.points import points_from_stats_dict
from auditor.snapshots.scopes import CUMULATIVE, Scope, scopes_for, tick_for, window_at
from auditor.snapshots.subset import subset_labels, window_mask
from auditor.snapshots.written import WrittenSnapshot
from auditor.stats import compute_measures
from auditor.stats.export import measure_set_to_dict
from auditor.storage import snapshot_repository as repo
from auditor.storage.label_loader import LabelRange
from auditor.storage.project_repository import ProjectRecord
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

TEST_DELAY_ENV = "AUDITOR_TEST_RECOMPUTE_DELAY"


class RecomputeInterrupted(Failure):
    """The database went away during a recompute (restart, terminated backend, dropped
    connection). Nothing was written; running the same recompute again is safe."""


class RecomputeFailed(Failure):
    """A recompute failed for a reason retrying at once would not fix. Nothing was written;
    the failure is recorded on the project (``recompute_health``), which the scan leaves
    alone for a growing backoff."""


@dataclass(frozen=True)
class DirtyProject:
    project_id: int
    slug: str
    tick: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class RecomputeResult:
    """What one recompute did. ``status``: written | not_dirty | locked | conflict."""

    project_id: int
    tick: int
    status: str
    decisions: tuple[ScopeDecision, ...] = ()
    written: tuple[WrittenSnapshot, ...] = ()
    load_seconds: float = 0.0
    compute_seconds: float = 0.0
    write_seconds: float = 0.0


def _last(head: repo.SnapshotHead | None) -> LastSnapshot | None:
    if head is None:
        return None
    return LastSnapshot(
        head.tick, head.watermark, head.project_label_count, head.window_start, head.window_end
    )


def _tick_taken(heads: dict[tuple[int, str], repo.SnapshotHead], tick: int) -> bool:
    return any(head.tick >= tick for head in heads.values())


def _reverted_since(
    uow: UnitOfWork, project_id: int, heads: dict[tuple[int, str], repo.SnapshotHead]
) -> bool:
    """An import was reverted after the project's newest snapshot was computed: labels left
    the project, and the next explicit recompute must show it."""
    reverted = uow.imports.last_revert_at(project_id)
    return reverted is not None and reverted > max(head.computed_at for head in heads.values())


def _decisions(
    uow: UnitOfWork,
    project: ProjectRecord,
    facts: ProjectFacts,
    heads: dict[tuple[int, str], repo.SnapshotHead],
    tick: int,
    now: datetime,
    rejections_changed: bool = False,
) -> list[ScopeDecision]:
    settings = project.settings
    cumulative = _last(heads.get((project.id, CUMULATIVE)))
    # Refused Label Studio calls changed: the next snapshot must show it (label_studio_points)
    new_labels = has_new_labels(cumulative, facts) or rejections_changed
    decisions = []
    for scope in scopes_for(settings):
        last = _last(heads.get((project.id, scope.name)))
        moved = False
        if scope.is_window and last is not None and not new_labels and last.tick < tick:
            ranges = moved_ranges(last, window_at(scope, now))
            moved = uow.snapshots.labels_in_ranges(project.id, ranges)
        decisions.append(decide(scope, last, tick, new_labels, moved, facts))
    return decisions


def scan_dirty_projects(uow: UnitOfWork, now: datetime | None = None) -> list[DirtyProject]:
    """Every project with at least one dirty scope at ``now``, with the tick to compute.
    Read only: nothing is written, whatever the answer."""
    now = now or datetime.now(UTC)
    dirty = []
    with uow:
        facts = uow.snapshots.label_facts()
        heads = uow.snapshots.latest_heads()
        backing_off = uow.health.backing_off(datetime.now(UTC))
        rejected = uow.label_studio_settings.pending()
        for project in sorted(uow.projects.all(), key=lambda p: p.id):
            max_id, count = facts.get(project.id, (None, 0))
            if project.id in backing_off:
                continue
            if max_id is None and not emptied(_last(heads.get((project.id, CUMULATIVE)))):
                continue  # no labels, and no snapshot showing labels it no longer has
            tick = tick_for(now, project.settings.recompute_interval_seconds)
            facts_now = ProjectFacts(max_id, count)
            changed = project.id in rejected
            decisions = _decisions(uow, project, facts_now, heads, tick, now, changed)
            reasons = tuple(f"{d.scope.name}: {d.reason}" for d in decisions if d.dirty)
            if reasons:
                dirty.append(DirtyProject(project.id, project.slug, tick, reasons))
    return dirty


def _seed(project_id: int, scope: str, tick: int, settings: ProjectSettings) -> int | None:
    """A reproducible resampling seed per (project, scope, tick); None without resampling."""
    if settings.interval_method != IntervalMethod.BOOTSTRAP:
        return None
    return zlib.crc32(f"{project_id}:{scope}:{tick}".encode())


def settings_json(settings: ProjectSettings) -> dict[str, Any]:
    """The settings a snapshot was computed with, as JSON values."""
    rendered: dict[str, Any] = {}
    for key, value in dataclasses.asdict(settings).items():
        if isinstance(value, Enum):
            value = value.value
        elif isinstance(value, tuple):
            value = list(value)
        rendered[key] = value
    return rendered


def _test_delay() -> None:
    delay = os.environ.get(TEST_DELAY_ENV)
    if delay:
        time.sleep(float(delay))


def recompute_project(
    uow: UnitOfWork,
    project_id: int,
    *,
    now: datetime | None = None,
    tick: int | None = None,
    force: bool = False,
    scan_interval_seconds: float = 60.0,
) -> RecomputeResult:
    """Recompute the dirty scopes of one project and write their snapshots atomically.

    ``now`` is the clock windows are measured at (simulated in the demo); ``tick`` defaults
    to the tick of ``now``. ``force`` recomputes every scope even when nothing changed
    (``auditor recompute --force``). Without a ``tick`` given (an explicit recompute, not the
    scan's), a ``force`` or a revert since the newest snapshot whose tick is taken writes at the
    next free tick: snapshots are unique per (project, scope, tick).
    Raises ``NotFound``, ``RecomputeInterrupted`` when the database went away (retry), or
    ``RecomputeFailed`` for anything else, after recording it on the project (the scan then
    backs off for 1, 2, 4, 8, at most 10 ``scan_interval_seconds``).

    Transactions: a read to decide, the load on its own connection, then ONE write
    transaction for every snapshot and point of this recompute (the unit of work that counts).
    """
    try:
        return _recompute(uow, project_id, now or datetime.now(UTC), tick, force)
    except NotFound:
        raise
    except Exception as error:
        if repo.is_transient(error):
            raise RecomputeInterrupted(f"project {project_id}: {error}") from error
        log.exception("recompute of project %s failed", project_id)
        recompute_health.record_failure(uow, project_id, error, scan_interval_seconds)
        raise RecomputeFailed(
            f"project {project_id}: {recompute_health.describe(error)}"
        ) from error


def _recompute(
    uow: UnitOfWork, project_id: int, now: datetime, tick: int | None, force: bool
) -> RecomputeResult:
    with uow.project_lock(project_id) as lock:
        if not lock.acquired:
            log.info("recompute skipped project=%s: another recompute holds the lock", project_id)
            return RecomputeResult(project_id, tick or -1, "locked")
        started = time.time()
        log.info("recompute running project=%s start=%.6f", project_id, started)
        try:
            return _recompute_locked(uow, lock, project_id, now, tick, force)
        finally:
            log.info(
                "recompute finished project=%s start=%.6f end=%.6f",
                project_id,
                started,
                time.time(),
            )


def _recompute_locked(
    uow: UnitOfWork,
    lock: repo.ProjectLock,
    project_id: int,
    now: datetime,
    tick: int | None,
    force: bool,
) -> RecomputeResult:
    with uow:
        project = uow.projects.by_id(project_id)
        if project is None:
            raise NotFound(f"no project with id {project_id}")
        pinned = tick is not None  # a scan's recompute: at most one snapshot per tick
        tick = tick_for(now, project.settings.recompute_interval_seconds) if tick is None else tick
        max_id, count = uow.snapshots.label_facts(project_id).get(project_id, (None, 0))
        facts = ProjectFacts(max_id, count)
        heads = uow.snapshots.latest_heads(project_id)
        # This tick's snapshot predates new labels or a revert (or --force asks for a new
        # one): an explicit recompute writes at the next free tick rather than nothing (a
        # user who asked for a recompute must not get the old numbers; issue 27). The scan
        # then finds that tick taken and picks up later labels at the one after.
        taken = not pinned and _tick_taken(heads, tick)
        changed = project_id in uow.label_studio_settings.pending()
        newer = has_new_labels(_last(heads.get((project_id, CUMULATIVE))), facts) or changed
        if taken and (force or newer or _reverted_since(uow, project_id, heads)):
            tick = max(head.tick for head in heads.values()) + 1
        decisions = _decisions(uow, project, facts, heads, tick, now, changed)
    if force and (max_id is not None or heads):
        decisions = [
            dataclasses.replace(d, dirty=True, reason="forced")
            if not d.dirty and not d.reason.startswith("already")
            else d
            for d in decisions
        ]
    due = [d.scope for d in decisions if d.dirty]
    if not due:
        return RecomputeResult(project_id, tick, "not_dirty", tuple(decisions))

    kept = _keep_statistics(uow, project_id, count)
    settings = project.settings
    t1 = time.perf_counter()
    served = None
    if kept is not None and not force:
        # also when only a window is due (labels aged out of it): reading every label for
        # the window's sake would cost what the kept statistics save
        served = _from_kept(uow, project_id, settings, count, kept)
    if served is None:
        t0 = time.perf_counter()
        loaded = uow.load_labels(project_id)
        load_seconds = time.perf_counter() - t0
        _test_delay()
        # The label ids are only needed for the watermark (taken at the load): dropping them
        # before the computation saves 8 bytes per label at the peak.
        source = _Source(
            dataclasses.replace(loaded.labels, label_ids=None),
            loaded.watermark,
            loaded.count,
            loaded.labels.order,
        )
        del loaded
        t1 = time.perf_counter()
        prepared = [
            _compute_scope(project_id, scope, tick, now, settings, source, load_seconds)
            for scope in due
        ]
        del source
    else:
        _test_delay()
        prepared = [
            _kept_row(project_id, scope, tick, now, settings, served)
            if scope.name == CUMULATIVE
            else _window_scope(uow, project_id, scope, tick, now, settings, served)
            for scope in due
        ]
        load_seconds = 0.0
    compute_seconds = time.perf_counter() - t1

    t2 = time.perf_counter()
    written: list[WrittenSnapshot] = []
    lock.ensure_held()
    with uow:
        for row, points, rendered, carried in prepared:
            if row["scope"] == CUMULATIVE:  # repeat coverage is not cut by windows
                points = [*points, *add_coverage(uow, project_id, rendered, now)]
                points = [*points, *rejection_points(uow, project_id)]
            snapshot_id = uow.snapshots.insert_snapshot(row, points)
            if snapshot_id is not None:
                written.append(
                    WrittenSnapshot(
                        snapshot_id,
                        row["scope"],
                        tick,
                        row["n_labels"],
                        rendered,
                        carried,
                        tuple(points),
                    )
                )
        # Alert state and its notices commit together with the snapshots, or not at all.
        evaluate_snapshots(uow, project_id, written)
        uow.health.clear_backoff(project_id)
        uow.commit()
    write_seconds = time.perf_counter() - t2
    status = "written" if written else "conflict"
    return RecomputeResult(
        project_id,
        tick,
        status,
        tuple(decisions),
        tuple(written),
        load_seconds,
        compute_seconds,
        write_seconds,
    )


def _keep_statistics(uow: UnitOfWork, project_id: int, count: int) -> KeptUpdate | None:
    """Fold the labels since the kept watermark into the kept statistics (issue 22), in a
    transaction of its own: they are derived data, so a failure here is logged and leaves
    the state at its old watermark (the next recompute catches up and this one reads every
    label) without costing the snapshot."""
    try:
        return update_kept(uow, project_id, expected_count=count)
    except Exception as error:
        if repo.is_transient(error):
            raise
        log.exception("keeping the statistics of project %s failed", project_id)
        return None


def _from_kept(
    uow: UnitOfWork, project_id: int, settings: ProjectSettings, count: int, held: KeptUpdate
) -> kept_snapshot.KeptScope | None:
    """The cumulative scope from the kept statistics, or None when this recompute reads every
    label: a small project, bootstrap intervals, or a full pass due (``kept_snapshot``)."""
    config = get_settings()
    if not kept_snapshot.wanted(settings, count, config.kept_snapshot_labels):
        return None
    with uow:
        full = kept_snapshot.latest_full_pass(uow, project_id)
    if full is None or kept_snapshot.full_pass_due(
        full, datetime.now(UTC), config.kept_full_pass_seconds, settings_json(settings)
    ):
        # windows the project no longer has leave no kept state behind (a change of windows
        # is a change of settings: a full pass is due then, not on every served recompute)
        with uow:
            uow.kept.drop_windows(project_id, [s.name for s in scopes_for(settings)])
            uow.commit()
        return None
    return kept_snapshot.compute(uow, project_id, settings, full, held=held)


@dataclass(frozen=True)
class _Source:
    """The loaded labels every scope is cut from, what the load covered, and the labeled_at
    of the project's labels (every label's, or only the latest one's when the load read one
    window: what an empty window's reason needs)."""

    labels: LabelArrays
    watermark: int | None
    count: int
    all_order: np.ndarray


Prepared = tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], frozenset[str]]


def _compute_scope(
    project_id: int,
    scope: Scope,
    tick: int,
    now: datetime,
    settings: ProjectSettings,
    loaded: _Source,
    load_seconds: float,
) -> Prepared:
    started = time.perf_counter()
    window = window_at(scope, now)
    labels = subset_labels(loaded.labels, window_mask(loaded.labels.order, window))
    seed = _seed(project_id, scope.name, tick, settings)
    rendered = measure_set_to_dict(compute_measures(labels, settings, seed=seed))
    rendered = explain_empty_window(rendered, scope, labels.order, loaded.all_order)
    del labels  # a window's subset is freed before the next scope is cut
    points = [p.as_row() for p in points_from_stats_dict(rendered)]
    elapsed_ms = (load_seconds + time.perf_counter() - started) * 1000
    row = _row(project_id, scope, tick, now, settings, rendered, seed, elapsed_ms)
    row["window_start"], row["window_end"] = window.start, window.end
    row["watermark"], row["project_label_count"] = loaded.watermark or 0, loaded.count
    return row, points, rendered, frozenset()


def _kept_row(
    project_id: int,
    scope: Scope,
    tick: int,
    now: datetime,
    settings: ProjectSettings,
    served: kept_snapshot.KeptScope,
) -> Prepared:
    """The cumulative scope served from the kept statistics: no point for a carried part."""
    rendered = served.rendered
    points = [
        p.as_row()
        for p in points_from_stats_dict(rendered)
        if (p.subject_kind, p.metric) not in served.carried
    ]
    row = _row(project_id, scope, tick, now, settings, rendered, None, served.seconds * 1000)
    row["window_start"] = row["window_end"] = None
    row["watermark"], row["project_label_count"] = served.watermark, served.label_count
    return row, points, rendered, kept_snapshot.carried_metrics(served.carried)


def _window_scope(
    uow: UnitOfWork,
    project_id: int,
    scope: Scope,
    tick: int,
    now: datetime,
    settings: ProjectSettings,
    served: kept_snapshot.KeptScope,
) -> Prepared:
    """A rolling window beside a cumulative scope served from the kept statistics: the
    window's own kept state, moved to ``now`` and brought to the cumulative state's
    watermark (so both describe the same labels); its own read of the window's labels
    (the labeled_at index) when it has no full pass to carry from."""
    window = window_at(scope, now)
    start_us, end_us = window.bounds_us()
    span = Span(scope.name, start_us, end_us)
    held = update_kept(uow, project_id, span=span, upto=served.watermark)
    with uow:
        full = kept_snapshot.latest_full_pass(uow, project_id, scope.name)
    found = (
        None
        if full is None
        else kept_snapshot.compute(uow, project_id, settings, full, scope.name, held)
    )
    if found is None:
        return _window_from_labels(uow, project_id, scope, tick, now, settings, served)
    rendered = explain_empty_window(
        found.rendered,
        scope,
        np.zeros(1 if found.label_count else 0, dtype=np.int64),
        _latest_order(uow, project_id, served.watermark),
    )
    kept_scope = dataclasses.replace(
        found, rendered=rendered, watermark=served.watermark, label_count=served.label_count
    )
    row, points, rendered, carried = _kept_row(project_id, scope, tick, now, settings, kept_scope)
    row["window_start"], row["window_end"] = window.start, window.end
    return row, points, rendered, carried


def _latest_order(uow: UnitOfWork, project_id: int, watermark: int) -> np.ndarray:
    """The labeled_at of the project's latest label up to ``watermark`` (empty without one):
    all an empty window's reason reads of the project's labels."""
    with uow:
        latest = uow.kept.last_labeled_at(project_id, watermark)
    return np.array([] if latest is None else [latest], dtype=np.int64)


def _window_from_labels(
    uow: UnitOfWork,
    project_id: int,
    scope: Scope,
    tick: int,
    now: datetime,
    settings: ProjectSettings,
    served: kept_snapshot.KeptScope,
) -> Prepared:
    """A window computed from its own labels, up to the kept watermark."""
    started = time.perf_counter()
    start_us, end_us = window_at(scope, now).bounds_us()
    loaded = uow.load_labels(project_id, LabelRange(start_us, end_us, served.watermark))
    source = _Source(
        dataclasses.replace(loaded.labels, label_ids=None),
        served.watermark,
        served.label_count,
        _latest_order(uow, project_id, served.watermark),
    )
    return _compute_scope(
        project_id, scope, tick, now, settings, source, time.perf_counter() - started
    )


def _row(
    project_id: int,
    scope: Scope,
    tick: int,
    now: datetime,
    settings: ProjectSettings,
    rendered: dict[str, Any],
    seed: int | None,
    elapsed_ms: float,
) -> dict[str, Any]:
    """The snapshot row of a computed scope (its window and watermark set by the caller)."""
    return {
        "project_id": project_id,
        "scope": scope.name,
        "tick": tick,
        "computed_at": datetime.now(UTC),
        "as_of": now,
        "n_labels": int(rendered["n_labels"]),
        "n_items": int(rendered["n_items"]),
        "n_raters": int(rendered["n_raters"]),
        "n_pairable_items": int(rendered["n_pairable_items"]),
        "categories": list(rendered["categories"]),
        "settings": settings_json(settings),
        "code_version": auditor.__version__,
        "seed": seed,
        "interval_method": settings.interval_method.value,
        "interval_level": settings.interval_level,
        "duration_ms": elapsed_ms,
        "result": rendered,
    }


def recompute_due_projects(uow: UnitOfWork, now: datetime | None = None) -> list[RecomputeResult]:
    """Scan, then recompute every dirty project here and now (the demo; the embedded loop
    goes project by project in ``auditor.services.recompute.embedded``)."""
    now = now or datetime.now(UTC)
    return [
        recompute_project(uow, p.project_id, now=now, tick=p.tick)
        for p in scan_dirty_projects(uow, now)
    ]


def find_project_id(uow: UnitOfWork, slug: str) -> int:
    with uow:
        return uow.require_project(slug).id
