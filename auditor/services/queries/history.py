"""Read-only services over snapshots: the history of one metric, and one snapshot in full."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from auditor.errors import Invalid, NotFound
from auditor.snapshots.points import parse_subject
from auditor.snapshots.scopes import CUMULATIVE, parse_scope
from auditor.storage.read_records import HistoryPointRow
from auditor.storage.snapshot_repository import HistoryCursor
from auditor.storage.unit_of_work import UnitOfWork

# Metadata printed beside the `auditor stats --json` shape by `auditor snapshot`.
SNAPSHOT_METADATA = (
    "id",
    "scope",
    "tick",
    "as_of",
    "computed_at",
    "window_start",
    "window_end",
    "watermark",
    "project_label_count",
    "settings",
    "code_version",
    "seed",
    "interval_method",
    "interval_level",
    "duration_ms",
)


# One point of a metric's history: the storage record as it is (scope, as_of, computed_at,
# value, ci_low, ci_high, n, reason, snapshot_id).
HistoryPoint = HistoryPointRow


def project_id_for(uow: UnitOfWork, slug: str) -> int:
    """The id of project ``slug``; ``NotFound`` when there is none."""
    return uow.require_project(slug).id


def scope_name(scope: str) -> str:
    """The canonical name of a scope ("cumulative", "7d"); ``Invalid`` when unparsable."""
    try:
        return parse_scope(scope).name
    except ValueError as error:
        raise Invalid(str(error)) from None


def reversed_pair(kind: str, subject_id: str) -> str | None:
    """A pair is one subject whichever rater is named first: "B|A" also finds "A|B"."""
    if kind != "pair":
        return None
    first, _, second = subject_id.partition("|")
    return f"{second}|{first}"


def explain_empty_series(
    uow: UnitOfWork,
    slug: str,
    project_id: int,
    metric: str,
    kind: str,
    subject_id: str,
    scope_names: list[str] | None,
) -> None:
    """Called when a history query found no point: raise ``NotFound`` naming what the project
    does report when the scope, metric or subject is one it never had (there is no such
    series: a well-formed question about something that does not exist); return quietly when
    they are known and the range was simply empty."""
    known = uow.snapshots.known_metrics(project_id)
    if not known:
        return  # no snapshot yet: an empty history is the honest answer
    if scope_names:
        project = uow.projects.by_id(project_id)
        settings = project.settings if project is not None else None
        computed = {CUMULATIVE} | {f"{d}d" for d in (settings.windows_days if settings else ())}
        unknown = [name for name in scope_names if name not in computed]
        if unknown:
            raise NotFound(
                f"project {slug!r} has no scope {unknown[0]!r}; its scopes: "
                + ", ".join(sorted(computed))
            )
    names = {subject_id, reversed_pair(kind, subject_id) or subject_id}
    if any(m == metric and k == kind and s in names for m, k, s in known):
        return
    metrics = sorted({m for m, k, _ in known if k == kind}) or sorted({m for m, *_ in known})
    subjects = sorted({s for m, k, s in known if m == metric and k == kind})
    detail = (
        f"known {kind} subjects for {metric}: {', '.join(subjects[:20])}"
        if subjects
        else f"known {kind} metrics: {', '.join(metrics)}"
    )
    target = "the project" if kind == "project" else f"{kind} {subject_id!r}"
    # A metric of raters (or models, pairs) asked of the project: say whose it is and how to
    # ask (issue 27: "history --metric self_agreement" without --subject).
    owners = sorted({k for m, k, _ in known if m == metric and k != kind})
    if owners:
        examples = {
            k: sorted({s for m, kk, s in known if m == metric and kk == k})[:3] for k in owners
        }
        how = "; or ".join(
            "leave out --subject"
            if k == "project"
            else f"give --subject {k}:ID (e.g. {', '.join(f'{k}:{s}' for s in examples[k])})"
            for k in owners
        )
        raise NotFound(
            f"{metric!r} is a {' and '.join(owners)} metric, not one of {target}: {how} ({detail})"
        )
    raise NotFound(f"project {slug!r} has no {metric!r} for {target}; {detail}")


def metric_history(
    uow: UnitOfWork,
    slug: str,
    metric: str,
    *,
    subject: str | None = None,
    scopes: list[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    after: HistoryCursor | None = None,
    limit: int | None = None,
) -> list[HistoryPoint]:
    """Points of ``metric`` for ``subject`` ("project", "rater:ID", "model:ID", "pair:A|B")
    in (as_of, scope, snapshot) order. A metric or subject the project never reported is
    ``NotFound``, naming what it does report; a known one with no point in the range gives an
    empty list. A page: at most ``limit`` points past ``after`` (the last point of the page
    before: its as_of, scope and snapshot id)."""
    try:
        kind, subject_id = parse_subject(subject)
    except ValueError as error:
        raise Invalid(str(error)) from None
    scope_names = [scope_name(s) for s in scopes] if scopes else None
    if since is not None and until is not None and since > until:
        raise Invalid(f"since {since.isoformat()} is after until {until.isoformat()}")
    with uow:
        project_id = project_id_for(uow, slug)
        page = (scope_names, since, until, after, limit)
        rows = uow.snapshots.history(project_id, metric, kind, subject_id, *page)
        other = reversed_pair(kind, subject_id)
        if not rows and other is not None:
            rows = uow.snapshots.history(project_id, metric, kind, other, *page)
        if not rows and after is None:  # a later page may well be empty
            explain_empty_series(uow, slug, project_id, metric, kind, subject_id, scope_names)
    return rows


def snapshot_view(
    uow: UnitOfWork, slug: str, *, scope: str = CUMULATIVE, at: datetime | None = None
) -> dict[str, Any]:
    """The snapshot of ``scope`` in force at ``at`` (default: the latest), as the
    ``auditor stats --json`` shape plus a ``snapshot`` object of metadata."""
    name = scope_name(scope)
    with uow:
        project_id = project_id_for(uow, slug)
        found = uow.snapshots.snapshot_at(project_id, name, at)
    if found is None:
        when = f" at or before {at.isoformat()}" if at is not None else ""
        raise NotFound(f"project {slug!r} has no {name} snapshot{when}")
    metadata = {key: found[key] for key in SNAPSHOT_METADATA}
    for key in ("as_of", "computed_at", "window_start", "window_end"):
        if metadata[key] is not None:
            metadata[key] = metadata[key].isoformat()
    metadata["project"] = slug
    return {**found["result"], "snapshot": metadata}


def snapshot_counts(uow: UnitOfWork, slug: str) -> dict[str, int]:
    with uow:
        return uow.snapshots.count_snapshots(project_id_for(uow, slug))
