"""Read services for the dashboard and the static report: everything one page shows, read in
one transaction, as plain values (no SQLAlchemy objects escape).

Pages:
- ``projects_overview``: every project with its latest cumulative kappa_S and rho and its
  alert state;
- ``project_detail``: history of the project metrics in every scope, the rater table, the
  pairwise Cohen matrix and the alert timeline;
- ``rater_detail``: one rater's (or model's) history and pairwise row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.errors import NotFound
from auditor.services.label_studio.rejections import RejectionSummary, summary_in
from auditor.services.queries.reverts import RevertMark, chart_reverts
from auditor.snapshots.scopes import CUMULATIVE, scopes_for
from auditor.stats.catalogue import charts_for, sparkline_metric
from auditor.storage.project_repository import ProjectRecord
from auditor.storage.read_records import HistoryPointRow
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class AlertStateView:
    rule: str
    subject: str
    state: str
    since: datetime | None
    value: float | None
    reason: str | None


@dataclass(frozen=True)
class AlertChange:
    """One transition of one rule and subject, for the timeline."""

    rule: str
    subject: str
    at: datetime
    from_state: str
    to_state: str
    value: float | None
    reason: str | None


@dataclass(frozen=True)
class AlertView:
    """Alert state of a project. ``configured`` False: the alert service is not installed in
    this build, or the project has no rule; ``message`` says which, for the page."""

    configured: bool
    message: str
    states: tuple[AlertStateView, ...] = ()
    changes: tuple[AlertChange, ...] = ()

    @property
    def worst(self) -> str:
        order = ("firing", "pending", "insufficient_data", "ok")
        present = {s.state for s in self.states}
        return next((state for state in order if state in present), "none")


def read_alerts(uow: UnitOfWork, slug: str, *, limit: int = 5000) -> AlertView:
    """Alert states and transitions of a project, inside the caller's transaction.

    The timeline needs transitions, not every evaluation: from the evaluation log (newest
    ``limit`` rows) it keeps each lane's first row, which sets its initial state, and every
    row whose state changed."""
    project_id = uow.require_project(slug).id
    if not uow.alerts.list_rules(project_id):
        return AlertView(
            False, "alerts not configured: this project has no alert rule (auditor alerts add)"
        )
    states = tuple(
        AlertStateView(
            r.rule_id, r.subject_key, r.status, r.status_since, r.last_value, r.last_reason
        )
        for r in uow.alerts.list_states(project_id)
    )
    rows = uow.alert_log.find_evaluations(project_id, limit=limit)
    seen: set[tuple[str, str]] = set()
    changes = []
    for r in sorted(rows, key=lambda r: (r.evaluated_at, r.id or 0)):
        lane = (r.rule_id, r.subject_key)
        if lane in seen and r.from_status == r.to_status:
            continue
        seen.add(lane)
        changes.append(
            AlertChange(
                r.rule_id, r.subject_key, r.evaluated_at, r.from_status, r.to_status, r.value,
                r.reason,
            )
        )  # fmt: skip
    return AlertView(True, "", states, tuple(changes))


# The charts of each subject, in page order: (metric, title), from the metric catalogue.
PROJECT_METRICS: tuple[tuple[str, str], ...] = charts_for("project")
RATER_METRICS: tuple[tuple[str, str], ...] = charts_for("rater")
MODEL_METRICS: tuple[tuple[str, str], ...] = charts_for("model")


@dataclass(frozen=True)
class Point:
    as_of: datetime
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None
    computed_at: datetime | None = None  # wall clock (as_of may be simulated, as in the demo)


@dataclass(frozen=True)
class ScopeSeries:
    """One metric of one subject in one scope, oldest first."""

    scope: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class MetricHistory:
    metric: str
    title: str
    series: tuple[ScopeSeries, ...]


@dataclass(frozen=True)
class ProjectCard:
    slug: str
    name: str
    counts: dict[str, int]
    as_of: datetime | None
    kappa_s: dict[str, Any] | None
    rho: dict[str, Any] | None
    n_snapshots: int
    alerts: AlertView


@dataclass(frozen=True)
class RaterRow:
    rater: str
    kind: str  # human | model
    measures: dict[str, dict[str, Any]]  # metric -> the stats JSON measure (value, ci, n...)
    window_measures: dict[str, dict[str, Any]]
    n_repeated_items: int | None
    sparkline: tuple[Point, ...]
    sparkline_scope: str


@dataclass(frozen=True)
class PairCell:
    rater_a: str
    rater_b: str
    kappa: dict[str, Any]
    n_items: int | None
    cohen_w: dict[str, Any] | None = None  # ordinal scales


@dataclass(frozen=True)
class ProjectDetail:
    card: ProjectCard
    scopes: tuple[str, ...]
    window_scope: str | None
    latest: dict[str, Any] | None  # the cumulative snapshot (stats JSON + "snapshot")
    latest_window: dict[str, Any] | None
    charts: tuple[MetricHistory, ...]
    raters: tuple[RaterRow, ...]
    pair_labels: tuple[str, ...]
    pairs: tuple[PairCell, ...]
    categories: tuple[str, ...] = field(default_factory=tuple)
    reverts: tuple[RevertMark, ...] = ()
    # Label Studio's refused webhook calls (None: the project does not use Label Studio)
    label_studio: RejectionSummary | None = None


@dataclass(frozen=True)
class RaterDetail:
    project: ProjectCard
    rater: str
    kind: str
    row: RaterRow
    charts: tuple[MetricHistory, ...]
    pairs: tuple[PairCell, ...]  # this rater against each other rater
    interval_method: str = "jackknife"
    interval_level: float = 0.95
    in_latest: bool = True  # False: not in the latest snapshot (every label reverted)
    # her confusion against the others ("when she says c, the others say k"), row-normalised,
    # with her count of each category; empty for a model or a snapshot without them
    categories: tuple[str, ...] = ()
    confusion: tuple[tuple[float | None, ...], ...] = ()
    confusion_n: tuple[int, ...] = ()


def _point(row: HistoryPointRow) -> Point:
    return Point(row.as_of, row.value, row.ci_low, row.ci_high, row.n, row.reason, row.computed_at)


def _series(
    uow: UnitOfWork, project_id: int, metric: str, kind: str, subject: str, scope: str
) -> tuple[Point, ...]:
    rows = uow.snapshots.history(project_id, metric, kind, subject, [scope])
    return tuple(_point(r) for r in rows)


def _latest(uow: UnitOfWork, project_id: int, scope: str | None) -> dict[str, Any] | None:
    if scope is None:
        return None
    found = uow.snapshots.snapshot_at(project_id, scope, None)
    if found is None:
        return None
    result = {**found["result"], "snapshot": {k: v for k, v in found.items() if k != "result"}}
    if scope == CUMULATIVE:  # repeat coverage: points of the snapshot, not in its stats JSON
        coverage = uow.repeats.coverage_points(found["id"])
        raters = result.get("raters", {})
        result["raters"] = {r: {**m, **coverage.get(r, {})} for r, m in raters.items()}
    return result


def _card(uow: UnitOfWork, project: ProjectRecord) -> ProjectCard:
    latest = _latest(uow, project.id, CUMULATIVE)
    measures = (latest or {}).get("measures", {})
    return ProjectCard(
        slug=project.slug,
        name=project.name,
        counts=uow.projects.counts(project.id),
        as_of=latest["snapshot"]["as_of"] if latest else None,
        kappa_s=measures.get("kappa_s"),
        rho=measures.get("rho"),
        n_snapshots=sum(uow.snapshots.count_snapshots(project.id).values()),
        alerts=read_alerts(uow, project.slug),
    )


def projects_overview(uow: UnitOfWork) -> list[ProjectCard]:
    with uow:
        return [_card(uow, project) for project in uow.projects.all()]


def _scopes(project: ProjectRecord) -> tuple[str, ...]:
    return tuple(s.name for s in scopes_for(project.settings))


def _histories(
    uow: UnitOfWork,
    project_id: int,
    metrics: tuple[tuple[str, str], ...],
    kind: str,
    subject: str,
    scopes: tuple[str, ...],
) -> tuple[MetricHistory, ...]:
    return tuple(
        MetricHistory(
            metric,
            title,
            tuple(
                ScopeSeries(scope, _series(uow, project_id, metric, kind, subject, scope))
                for scope in scopes
            ),
        )
        for metric, title in metrics
    )


def _rater_row(
    uow: UnitOfWork,
    project_id: int,
    rater: str,
    kind: str,
    latest: dict[str, Any],
    window: dict[str, Any] | None,
    window_scope: str | None,
) -> RaterRow:
    section = "raters" if kind == "human" else "models"
    measures = latest.get(section, {}).get(rater, {})
    window_measures = (window or {}).get(section, {}).get(rater, {})
    # The sparkline follows the recent window when there is one: that is where a rater who
    # got worse this week shows first.
    spark_scope = window_scope or CUMULATIVE
    spark_metric = sparkline_metric("rater" if kind == "human" else "model")
    return RaterRow(
        rater=rater,
        kind=kind,
        measures={k: v for k, v in measures.items() if isinstance(v, dict)},
        window_measures={k: v for k, v in window_measures.items() if isinstance(v, dict)},
        n_repeated_items=measures.get("n_repeated_items"),
        sparkline=_series(
            uow,
            project_id,
            spark_metric,
            "rater" if kind == "human" else "model",
            rater,
            spark_scope,
        ),
        sparkline_scope=spark_scope,
    )


def _has_history(uow: UnitOfWork, project_id: int, kind: str, subject: str) -> bool:
    """Has some cumulative snapshot a value (defined or not) of this rater or model?"""
    metric = sparkline_metric(kind)
    return bool(uow.snapshots.history(project_id, metric, kind, subject, [CUMULATIVE]))


def _pairs(latest: dict[str, Any] | None) -> tuple[tuple[str, ...], tuple[PairCell, ...]]:
    if not latest:
        return (), ()
    cells = tuple(
        PairCell(p["rater_a"], p["rater_b"], p["kappa"], p.get("n_items"), p.get("cohen_w"))
        for p in latest.get("pairwise_cohen", [])
    )
    labels = sorted({c.rater_a for c in cells} | {c.rater_b for c in cells})
    return tuple(labels), cells


def project_detail(uow: UnitOfWork, slug: str) -> ProjectDetail:
    with uow:
        row = uow.require_project(slug)
        card = _card(uow, row)
        scopes = _scopes(row)
        window_scope = next((s for s in scopes if s != CUMULATIVE), None)
        latest = _latest(uow, row.id, CUMULATIVE)
        latest_window = _latest(uow, row.id, window_scope)
        charts = _histories(uow, row.id, PROJECT_METRICS, "project", "", scopes)
        raters: list[RaterRow] = []
        if latest:
            for kind, section in (("human", "raters"), ("model", "models")):
                for rater in sorted(latest.get(section, {})):
                    raters.append(
                        _rater_row(uow, row.id, rater, kind, latest, latest_window, window_scope)
                    )
        labels, pairs = _pairs(latest)
        return ProjectDetail(
            card=card,
            scopes=scopes,
            window_scope=window_scope,
            latest=latest,
            latest_window=latest_window,
            charts=charts,
            raters=tuple(raters),
            pair_labels=labels,
            pairs=pairs,
            categories=tuple(c.name for c in uow.projects.categories(row.id)),
            reverts=chart_reverts(uow, row.id, charts[0].series[0].points if charts else ()),
            label_studio=summary_in(uow, row.id),
        )


def rater_detail(uow: UnitOfWork, slug: str, rater: str) -> RaterDetail:
    with uow:
        row = uow.require_project(slug)
        card = _card(uow, row)
        scopes = _scopes(row)
        window_scope = next((s for s in scopes if s != CUMULATIVE), None)
        latest = _latest(uow, row.id, CUMULATIVE)
        if latest is None:
            raise NotFound(f"project {slug!r} has no snapshot yet, so no rater {rater!r}")
        if rater in latest.get("raters", {}):
            kind, metrics, subject_kind = "human", RATER_METRICS, "rater"
        elif rater in latest.get("models", {}):
            kind, metrics, subject_kind = "model", MODEL_METRICS, "model"
        elif _has_history(uow, row.id, "rater", rater):
            # gone from the latest snapshot (all their labels reverted): their history stays
            kind, metrics, subject_kind = "human", RATER_METRICS, "rater"
        elif _has_history(uow, row.id, "model", rater):
            kind, metrics, subject_kind = "model", MODEL_METRICS, "model"
        else:
            raise NotFound(f"project {slug!r} has no rater {rater!r} in any snapshot")
        latest_window = _latest(uow, row.id, window_scope)
        rater_row = _rater_row(uow, row.id, rater, kind, latest, latest_window, window_scope)
        charts = _histories(uow, row.id, metrics, subject_kind, rater, scopes)
        _, pairs = _pairs(latest)
        mine = tuple(p for p in pairs if rater in (p.rater_a, p.rater_b))
        meta = latest["snapshot"]
        own = latest.get("raters", {}).get(rater, {})
        return RaterDetail(
            card,
            rater,
            kind,
            rater_row,
            charts,
            mine,
            str(meta.get("interval_method") or "jackknife"),
            float(meta.get("interval_level") or 0.95),
            in_latest=rater in latest.get("raters", {}) or rater in latest.get("models", {}),
            categories=tuple(latest.get("categories", ())),
            confusion=tuple(tuple(row) for row in own.get("confusion", ())),
            confusion_n=tuple(own.get("confusion_n", ())),
        )
