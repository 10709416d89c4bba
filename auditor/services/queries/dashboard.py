"""Read services for the dashboard and the static report: everything one page shows, read in
one transaction, as plain values (no SQLAlchemy objects escape).

Pages:
- ``projects_overview``: every project with its latest cumulative kappa_S and rho and its
  alert state;
- ``project_detail``: history of the project metrics in every scope, the rater table, the
  pairwise Cohen matrix and the alert timeline (above TABLE_LIMIT raters the rows of most
  concern and the weakest pairs; ``all_raters=True``: every row and the pairwise summary);
- ``rater_detail``: one rater's (or model's) history and pairwise row.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from auditor.errors import NotFound
from auditor.services.label_studio.rejections import RejectionSummary, summary_in
from auditor.services.queries.attention import (
    DIP_METRICS,
    MAX_LISTED,
    Attention,
    dated,
    natural_key,
    needs_attention,
)
from auditor.services.queries.pairs import (
    MATRIX_LIMIT,
    MIN_SHARED,
    WEAKEST,
    PairSummary,
    summarize,
    summarize_rows,
)
from auditor.services.queries.reverts import RevertMark, chart_reverts
from auditor.snapshots.scopes import CUMULATIVE, scopes_for
from auditor.stats.catalogue import charts_for, sparkline_metric
from auditor.storage.history_buckets import BUCKETS, SPARK_BUCKETS
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
    rule_metrics: dict[str, str] = field(default_factory=dict)  # rule id -> its metric

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
    rules = uow.alerts.list_rules(project_id)
    if not rules:
        return AlertView(
            False,
            "alerts not configured: this project has no alert rule; add the default ones with "
            f"auditor alerts defaults {slug}",
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
    return AlertView(True, "", states, tuple(changes), {r.id: r.metric for r in rules})


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
    # who needs attention, heaviest first (at most MAX_LISTED), and how many more do
    attention: tuple[Attention, ...] = ()
    attention_more: int = 0
    # those only short of repeats: one line on the page, no charts
    attention_minor: tuple[Attention, ...] = ()
    # every subject who needs attention -> her flags (the rater table's), heaviest first
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # snapshots per scope (the charts draw at most a bounded number of them)
    snapshot_counts: dict[str, int] = field(default_factory=dict)
    # above MATRIX_LIMIT raters: the pairwise summary the page shows instead of the matrix
    # (on the project page only its weakest pairs; every rater's row on the all-raters page)
    pair_summary: PairSummary | None = None
    # human raters of the snapshot left out of the table (the project page shows the
    # TABLE_LIMIT of most concern; the all-raters page, ``all_raters``, every one)
    raters_hidden: int = 0
    all_raters: bool = False


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
    # why she needs attention, as on the project page (None: she does not)
    attention: Attention | None = None


def _point(row: HistoryPointRow) -> Point:
    return Point(row.as_of, row.value, row.ci_low, row.ci_high, row.n, row.reason, row.computed_at)


def _series(
    uow: UnitOfWork,
    project_id: int,
    metric: str,
    kind: str,
    subject: str,
    scope: str,
    since: datetime | None = None,
) -> tuple[Point, ...]:
    """One series, at most a chart's worth of points (lowest and highest per span of time:
    ``auditor.storage.history_buckets``)."""
    found = uow.snapshots.bounded_history(
        project_id, metric, kind, subjects=[subject], scopes=[scope], since=since
    )
    return tuple(_point(r) for r in found.get((subject, scope), ()))


def _many(
    uow: UnitOfWork,
    project_id: int,
    metric: str,
    kind: str,
    scope: str,
    since: datetime | None = None,
    buckets: int = BUCKETS,
    subjects: list[str] | None = None,
) -> dict[str, tuple[Point, ...]]:
    """Subject -> her series of ``metric`` in ``scope``, for every subject (or those of
    ``subjects``), in one query."""
    found = uow.snapshots.bounded_history(
        project_id, metric, kind, subjects=subjects, scopes=[scope], since=since, buckets=buckets
    )
    return {subject: tuple(_point(r) for r in rows) for (subject, _), rows in found.items()}


def _latest(
    uow: UnitOfWork, project_id: int, scope: str | None, *, pairs: bool = True
) -> dict[str, Any] | None:
    """The latest snapshot of ``scope``; ``pairs`` False: without its ``pairwise_cohen``."""
    if scope is None:
        return None
    if pairs:
        found = uow.snapshots.snapshot_at(project_id, scope, None)
    else:
        found = uow.snapshots.snapshot_without_at(project_id, scope, None, "pairwise_cohen")
    if found is None:
        return None
    result = {**found["result"], "snapshot": {k: v for k, v in found.items() if k != "result"}}
    if scope == CUMULATIVE:  # repeat coverage: points of the snapshot, not in its stats JSON
        coverage = uow.repeats.coverage_points(found["id"])
        raters = result.get("raters", {})
        result["raters"] = {r: {**m, **coverage.get(r, {})} for r, m in raters.items()}
    return result


def _card(uow: UnitOfWork, project: ProjectRecord) -> ProjectCard:
    return _card_of(uow, project, _latest(uow, project.id, CUMULATIVE, pairs=False))


def _card_of(
    uow: UnitOfWork,
    project: ProjectRecord,
    latest: dict[str, Any] | None,
    counts: dict[str, int] | None = None,
) -> ProjectCard:
    """The project's card, given its latest cumulative snapshot and its snapshot counts per
    scope when the caller read them already (each read once per page)."""
    measures = (latest or {}).get("measures", {})
    return ProjectCard(
        slug=project.slug,
        name=project.name,
        counts=uow.projects.counts(project.id),
        as_of=latest["snapshot"]["as_of"] if latest else None,
        kappa_s=measures.get("kappa_s"),
        rho=measures.get("rho"),
        n_snapshots=sum(
            (counts if counts is not None else uow.snapshots.count_snapshots(project.id)).values()
        ),
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
    out = []
    for metric, title in metrics:
        found = uow.snapshots.bounded_history(
            project_id, metric, kind, subjects=[subject], scopes=scopes
        )
        series = tuple(
            ScopeSeries(scope, tuple(_point(r) for r in found.get((subject, scope), ())))
            for scope in scopes
        )
        out.append(MetricHistory(metric, title, series))
    return tuple(out)


def _rater_row(
    uow: UnitOfWork,
    project_id: int,
    rater: str,
    kind: str,
    latest: dict[str, Any],
    window: dict[str, Any] | None,
    window_scope: str | None,
    sparklines: dict[str, tuple[Point, ...]] | None = None,
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
        sparkline=(
            sparklines.get(rater, ())
            if sparklines is not None
            else _series(
                uow,
                project_id,
                spark_metric,
                "rater" if kind == "human" else "model",
                rater,
                spark_scope,
            )
        ),
        sparkline_scope=spark_scope,
    )


def _has_history(uow: UnitOfWork, project_id: int, kind: str, subject: str) -> bool:
    """Has some cumulative snapshot a value (defined or not) of this rater or model?"""
    metric = sparkline_metric(kind)
    return bool(uow.snapshots.history(project_id, metric, kind, subject, [CUMULATIVE], limit=1))


def _pairs(latest: dict[str, Any] | None) -> tuple[tuple[str, ...], tuple[PairCell, ...]]:
    if not latest:
        return (), ()
    cells = tuple(
        PairCell(p["rater_a"], p["rater_b"], p["kappa"], p.get("n_items"), p.get("cohen_w"))
        for p in latest.get("pairwise_cohen", [])
    )
    labels = sorted({c.rater_a for c in cells} | {c.rater_b for c in cells}, key=natural_key)
    return tuple(labels), cells


# The small multiples of a subject who needs attention, and how far back they reach.
ATTENTION_METRICS = {"human": ("self_agreement", "reliability", "s_vs_group")}
ATTENTION_SPAN = timedelta(days=28)


def _attention(
    uow: UnitOfWork,
    project_id: int,
    card: ProjectCard,
    latest: dict[str, Any] | None,
    window: dict[str, Any] | None,
    window_scope: str | None,
    scopes: tuple[str, ...],
) -> tuple[tuple[Attention, ...], int, tuple[Attention, ...], list[Attention]]:
    """Who needs attention (see ``auditor.services.queries.attention``), each listed subject
    with her small multiples over the last weeks."""
    if not latest or card.as_of is None:
        return (), 0, (), []
    before = None
    if window_scope is not None:
        before = _latest_at(uow, project_id, window_scope, card.as_of - timedelta(days=7))
    recent: dict[tuple[str, str], dict[str, tuple[Point, ...]]] = {}
    if window_scope is not None:
        since = card.as_of - ATTENTION_SPAN
        for kind, subject_kind in (("human", "rater"),):  # models have none of these
            for metric in DIP_METRICS:  # the small multiples are read below, per listed
                many = _many(uow, project_id, metric, subject_kind, window_scope, since)
                for subject, points in many.items():
                    recent.setdefault((kind, subject), {})[metric] = points
    listed = needs_attention(
        latest=latest,
        window=window,
        window_before=before,
        window_title=_scope_title(window_scope) if window_scope else "cumulative",
        states=card.alerts.states,
        changes=card.alerts.changes,
        rule_metrics=card.alerts.rule_metrics,
        as_of=card.as_of,
        recent=recent,
    )
    shown = []
    since = card.as_of - ATTENTION_SPAN
    major = [item for item in listed if not item.minor]
    minor = tuple(item for item in listed if item.minor)
    for item in major[:MAX_LISTED]:
        subject_kind = "rater" if item.kind == "human" else "model"
        wanted = ATTENTION_METRICS.get(item.kind) or (MODEL_METRICS[0][0],)
        titles = dict(RATER_METRICS if item.kind == "human" else MODEL_METRICS)
        charts = tuple(
            MetricHistory(
                metric,
                titles.get(metric, metric),
                tuple(
                    ScopeSeries(
                        scope,
                        _series(uow, project_id, metric, subject_kind, item.subject, scope, since),
                    )
                    for scope in scopes
                ),
            )
            for metric in wanted
        )
        shown.append(dated(replace(item, charts=charts), window_scope or CUMULATIVE))
    return tuple(shown), max(0, len(major) - MAX_LISTED), minor, listed


def _own_attention(
    uow: UnitOfWork,
    project_id: int,
    card: ProjectCard,
    latest: dict[str, Any],
    window: dict[str, Any] | None,
    window_scope: str | None,
    rater: str,
    kind: str,
) -> Attention | None:
    """Her entry of the project's attention list (the same rules, her values only)."""
    section = "raters" if kind == "human" else "models"
    if card.as_of is None or rater not in latest.get(section, {}):
        return None

    def only(snapshot: dict[str, Any] | None) -> dict[str, Any] | None:
        if snapshot is None:
            return None
        return {section: {rater: snapshot.get(section, {}).get(rater, {})}}

    before = None
    recent: dict[tuple[str, str], dict[str, tuple[Point, ...]]] = {}
    if window_scope is not None:
        before = _latest_at(uow, project_id, window_scope, card.as_of - timedelta(days=7))
        if kind == "human":
            since = card.as_of - ATTENTION_SPAN
            recent[(kind, rater)] = {
                metric: _series(uow, project_id, metric, "rater", rater, window_scope, since)
                for metric in ATTENTION_METRICS["human"]
            }
    subject = f"{'rater' if kind == 'human' else 'model'}:{rater}"
    found = needs_attention(
        latest=only(latest),
        window=only(window),
        window_before=only(before),
        window_title=_scope_title(window_scope) if window_scope else "cumulative",
        states=[s for s in card.alerts.states if s.subject == subject],
        changes=[c for c in card.alerts.changes if c.subject == subject],
        rule_metrics=card.alerts.rule_metrics,
        as_of=card.as_of,
        recent=recent,
    )
    if not found or window_scope is None:
        return found[0] if found else None
    series = recent.get((kind, rater), {})
    charts = tuple(
        MetricHistory(metric, metric, (ScopeSeries(window_scope, points),))
        for metric, points in series.items()
    )
    return dated(replace(found[0], charts=charts), window_scope)


def _scope_title(scope: str) -> str:
    return "cumulative" if scope == CUMULATIVE else f"last {scope[:-1]} days"


def _latest_at(
    uow: UnitOfWork, project_id: int, scope: str, at: datetime | None
) -> dict[str, Any] | None:
    """The rater parts of the window snapshot at ``at`` (the page needs no more of it)."""
    found = uow.snapshots.snapshot_parts_at(project_id, scope, at, ("measures", "raters", "models"))
    return None if found is None else dict(found["result"])


# Above this many human raters the project page's table shows the ones of most concern (and
# the pairwise section only the weakest pairs); the all-raters page shows every one. Its cost
# then does not grow with the raters beyond reading the snapshot.
TABLE_LIMIT = 30


def project_detail(uow: UnitOfWork, slug: str, *, all_raters: bool = False) -> ProjectDetail:
    """The project page; ``all_raters``: the all-raters page (every row, the full pairwise
    summary)."""
    with uow:
        row = uow.require_project(slug)
        scopes = _scopes(row)
        window_scope = next((s for s in scopes if s != CUMULATIVE), None)
        latest = _latest(uow, row.id, CUMULATIVE, pairs=False)
        counts = uow.snapshots.count_snapshots(row.id)
        card = _card_of(uow, row, latest, counts)
        latest_window = (
            _latest_at(uow, row.id, window_scope, None) if window_scope is not None else None
        )
        charts = _histories(uow, row.id, PROJECT_METRICS, "project", "", scopes)
        attention, attention_more, attention_minor, listed = _attention(
            uow, row.id, card, latest, latest_window, window_scope, scopes
        )
        # The rater table by concern (who needs attention first), then naturally by name;
        # above TABLE_LIMIT humans the project page keeps the first TABLE_LIMIT.
        weight = {a.subject: a.weight for a in listed}
        raters: list[RaterRow] = []
        hidden = 0
        for kind, section in (("human", "raters"), ("model", "models")) if latest else ():
            subject_kind = "rater" if kind == "human" else "model"
            names = sorted(
                latest.get(section, {}),  # type: ignore[union-attr]
                key=lambda name: (-weight.get(name, 0.0), natural_key(name)),
            )
            if kind == "human" and not all_raters and len(names) > TABLE_LIMIT:
                hidden = len(names) - TABLE_LIMIT
                names = names[:TABLE_LIMIT]
            # every sparkline of the table in one query (only the rows shown)
            lines = _many(
                uow, row.id, sparkline_metric(subject_kind), subject_kind,
                window_scope or CUMULATIVE, buckets=SPARK_BUCKETS,
                subjects=names if hidden and kind == "human" else None,
            )  # fmt: skip
            for rater in names:
                raters.append(
                    _rater_row(
                        uow, row.id, rater, kind, latest or {}, latest_window, window_scope, lines
                    )
                )
        labels, pairs, pair_summary = _page_pairs(uow, row.id, latest, full=all_raters)
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
            attention=attention,
            attention_more=attention_more,
            attention_minor=attention_minor,
            flags={a.subject: a.tags for a in listed},
            pair_summary=pair_summary,
            snapshot_counts=counts,
            raters_hidden=hidden,
            all_raters=all_raters,
        )


def _page_pairs(
    uow: UnitOfWork, project_id: int, latest: dict[str, Any] | None, *, full: bool = True
) -> tuple[tuple[str, ...], tuple[PairCell, ...], PairSummary | None]:
    """The pairs of the latest cumulative snapshot (read without them): up to MATRIX_LIMIT
    raters its JSON's cells (the heat map shows every field); above it only the summary, from
    its pair points (one indexed read of plain columns, no object per pair); not ``full``
    (the project page): only the summary's weakest pairs, ordered and cut by the database."""
    if not latest:
        return (), (), None
    if not full and len(latest.get("raters", {})) > MATRIX_LIMIT:
        lowest, total = uow.snapshots.weakest_pairs(
            latest["snapshot"]["id"], "cohen_kappa", MIN_SHARED, WEAKEST
        )
        weak: list[PairCell] = []
        for subject, (value, low, high, n, reason) in lowest:
            a, _, b = subject.partition("|")
            kappa = {"value": value, "ci_low": low, "ci_high": high, "n": n, "reason": reason}
            weak.append(PairCell(a, b, kappa, n))
        labels = tuple(sorted(latest.get("raters", {}), key=natural_key))
        return labels, (), PairSummary((), tuple(weak), total)
    if len(latest.get("raters", {})) <= MATRIX_LIMIT:
        found = uow.snapshots.snapshot_parts_at(
            project_id, CUMULATIVE, latest["snapshot"]["as_of"], ("pairwise_cohen",)
        )
        labels, cells = _pairs((found or {}).get("result"))
        summary = summarize(labels, cells) if len(labels) > MATRIX_LIMIT else None
        return labels, cells, summary
    rows = []
    for subject, (value, low, high, n, reason) in uow.snapshots.pair_points(
        latest["snapshot"]["id"], "cohen_kappa"
    ):
        a, _, b = subject.partition("|")
        rows.append((a, b, value, n, (a, b, low, high, reason)))
    labels = tuple(sorted({r[0] for r in rows} | {r[1] for r in rows}, key=natural_key))
    summary = summarize_rows(labels, rows)
    weakest = tuple(
        PairCell(
            a, b, {"value": value, "ci_low": low, "ci_high": high, "n": n, "reason": reason}, n
        )
        for a, b, value, n, (_, _, low, high, reason) in (
            next(r for r in rows if r[4] is w) for w in summary.weakest
        )
    )
    return labels, (), replace(summary, weakest=weakest)


def _her_pairs(uow: UnitOfWork, latest: dict[str, Any], rater: str) -> tuple[PairCell, ...]:
    """Her row of the pairwise matrix: from the snapshot's pair points (``cohen_kappa`` and,
    on ordinal scales, ``cohen_w``), not from parsing every pair of its JSON."""
    snapshot_id = latest["snapshot"]["id"]

    def hers(metric: str) -> dict[tuple[str, str], dict[str, Any]]:
        found = {}
        for subject, (value, low, high, n, reason) in uow.snapshots.pair_points(
            snapshot_id, metric
        ):
            a, _, b = subject.partition("|")
            if rater in (a, b):
                found[(a, b)] = {
                    "value": value, "ci_low": low, "ci_high": high, "n": n, "reason": reason,
                }  # fmt: skip
        return found

    kappas = hers("cohen_kappa")
    weighted = hers("cohen_w") if latest.get("scale") == "ordinal" else {}
    return tuple(
        PairCell(a, b, kappa, kappa.get("n"), weighted.get((a, b)))
        for (a, b), kappa in kappas.items()
    )


def project_pairs(uow: UnitOfWork, slug: str) -> tuple[PairCell, ...]:
    """Every pair of the latest cumulative snapshot (the full matrix, for a download)."""
    with uow:
        row = uow.require_project(slug)
        return _pairs(_latest(uow, row.id, CUMULATIVE))[1]


def rater_detail(uow: UnitOfWork, slug: str, rater: str) -> RaterDetail:
    with uow:
        row = uow.require_project(slug)
        scopes = _scopes(row)
        window_scope = next((s for s in scopes if s != CUMULATIVE), None)
        latest = _latest(uow, row.id, CUMULATIVE, pairs=False)
        card = _card_of(uow, row, latest)
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
        mine_attention = _own_attention(
            uow, row.id, card, latest, latest_window, window_scope, rater, kind
        )
        charts = _histories(uow, row.id, metrics, subject_kind, rater, scopes)
        mine = _her_pairs(uow, latest, rater)
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
            attention=mine_attention,
        )
