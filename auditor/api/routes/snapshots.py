"""Snapshots (list, latest, one in full) and the history of one metric (read, admin)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import Field

from auditor.api.deps import OPAQUE_MAX, Ids, Reader, ReadUow, Slug
from auditor.api.schemas import (
    SUBJECT_PATTERN,
    HistoryOut,
    HistoryPointOut,
    IsoTime,
    RevertMarkOut,
    SnapshotList,
    SnapshotSummary,
)
from auditor.domain import SCOPE_PATTERN, from_micros, to_micros
from auditor.errors import Invalid, NotFound
from auditor.services.access.public_ids import PublicIds
from auditor.services.queries import project_reads as service
from auditor.services.queries.history import (
    HistoryCursor,
    HistoryPoint,
    metric_history,
    snapshot_view,
)
from auditor.services.queries.reverts import project_reverts

router = APIRouter(prefix="/api/v1/projects", tags=["snapshots and history"])

ScopeName = Annotated[
    str, Query(pattern=SCOPE_PATTERN, description="'cumulative' or a window like '7d'")
]


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def shown(metadata: dict[str, Any], ids: PublicIds, project_id: int) -> dict[str, Any]:
    """Snapshot metadata as a project key sees it: an opaque id, and the watermark as the
    project's own label count (the global label id would tell other tenants' volume)."""
    return {
        **metadata,
        "id": ids.encode("snapshot", project_id, metadata["id"]),
        "watermark": metadata["project_label_count"],
    }


def _opaque_source(view: dict[str, Any], ids: PublicIds, project_id: int) -> dict[str, Any]:
    """A served snapshot's ``source`` names its full pass by the opaque id a key sees."""
    source = view.get("source")
    if not isinstance(source, dict) or source.get("full_pass") is None:
        return view
    full_pass = ids.encode("snapshot", project_id, int(source["full_pass"]))
    return {**view, "source": {**source, "full_pass": full_pass}}


@router.get("/{slug}/snapshots", response_model=SnapshotList)
def list_snapshots(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    scope: Annotated[str | None, Query(pattern=SCOPE_PATTERN)] = None,
    before: Annotated[int | None, Query(ge=0, le=OPAQUE_MAX, description="id cursor")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> SnapshotList:
    """Snapshot summaries, newest first; page with ``before`` = the previous page's
    ``next_before``. Ids are opaque (``docs/api.md``)."""
    cursor = None if before is None else ids.decode("snapshot", who.project_id, before)
    rows = service.list_snapshots(uow, slug, scope, cursor, limit)
    shown_rows = [shown(asdict(r), ids, who.project_id) for r in rows]
    next_before = shown_rows[-1]["id"] if len(rows) == limit else None
    return SnapshotList(
        snapshots=[SnapshotSummary(**r) for r in shown_rows], next_before=next_before
    )


@router.get("/{slug}/snapshots/latest", response_model=dict[str, Any])
def latest_snapshot(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    scope: ScopeName = "cumulative",
    at: Annotated[IsoTime | None, Query(description="in force at this time")] = None,
) -> dict[str, Any]:
    """The latest snapshot of ``scope`` (or the one in force at ``at``): the
    ``auditor stats --json`` shape plus a ``snapshot`` object of metadata."""
    view = _opaque_source(snapshot_view(uow, slug, scope=scope, at=_utc(at)), ids, who.project_id)
    return {**view, "snapshot": shown(view["snapshot"], ids, who.project_id)}


@router.get("/{slug}/snapshots/{snapshot_id}", response_model=dict[str, Any])
def get_snapshot(
    slug: Slug,
    snapshot_id: Annotated[int, Path(ge=0, le=OPAQUE_MAX)],
    uow: ReadUow,
    who: Reader,
    ids: Ids,
) -> dict[str, Any]:
    """One snapshot in full (same shape as ``latest``)."""
    found = ids.decode("snapshot", who.project_id, snapshot_id)
    try:
        view = service.get_snapshot(uow, slug, found)  # type: ignore[arg-type]
    except NotFound:
        raise NotFound(f"project {slug!r} has no snapshot {snapshot_id}") from None
    view = _opaque_source(view, ids, who.project_id)
    return {**view, "snapshot": shown(view["snapshot"], ids, who.project_id)}


@router.get("/{slug}/history", response_model=HistoryOut)
def history(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    metric: Annotated[str, Query(min_length=1, max_length=64)],
    subject: Annotated[
        str,
        Query(
            max_length=420,
            pattern=SUBJECT_PATTERN,
            description="'project', 'rater:ID', 'model:ID' or 'pair:A|B'",
        ),
    ] = "project",
    scope: Annotated[
        list[Annotated[str, Field(pattern=SCOPE_PATTERN)]] | None, Query(max_length=10)
    ] = None,
    since: Annotated[IsoTime | None, Query(description="ISO 8601; no zone = UTC")] = None,
    until: Annotated[IsoTime | None, Query(description="ISO 8601; no zone = UTC")] = None,
    points: Annotated[int, Query(ge=1, le=5000, description="at most this many per scope")] = 500,
    every: Annotated[
        bool, Query(alias="all", description="every point, in pages (limit, after)")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=10_000, description="with all: points per page")] = 5000,
    after: Annotated[
        str | None,
        Query(max_length=100, description="with all: the previous page's next_after"),
    ] = None,
) -> HistoryOut:
    """A metric's time series. The range [since, until] is cut into ``points`` equal buckets
    per scope and each bucket keeps its last value, so a long history stays small. With
    ``all=true``, every point instead (``auditor history``'s rows), ``limit`` per page in
    (as_of, scope) order; ``next_after`` continues."""
    next_after = None
    if every:
        cursor = None if after is None else _cursor(after, ids, who.project_id)
        # every point: the rows of ``auditor history``, so the CLI, the client and the API agree
        rows = metric_history(
            uow, slug, metric, subject=subject, scopes=scope, since=_utc(since),
            until=_utc(until), after=cursor, limit=limit,
        )  # fmt: skip
        if len(rows) == limit:
            next_after = _next_after(rows[-1], ids, who.project_id)
    elif after is not None:
        raise Invalid("after pages every point: give all=true with it", field="after")
    else:
        rows = service.history(
            uow, slug, metric, subject=subject, scopes=scope, since=_utc(since),
            until=_utc(until), max_points=points,
        )  # fmt: skip
    opaque = partial(ids.encode, "snapshot", who.project_id)
    return HistoryOut(
        metric=metric,
        subject=subject,
        max_points=limit if every else points,
        points=[
            HistoryPointOut(**{**asdict(row), "snapshot_id": opaque(row.snapshot_id)})
            for row in rows
        ],
        reverts=[
            RevertMarkOut(
                import_id=ids.encode("import", who.project_id, mark.import_id),
                source=mark.source,
                reverted_at=mark.at,
                labels=mark.labels,
            )
            for mark in project_reverts(uow, slug, _utc(since), _utc(until))
        ],
        next_after=next_after,
    )


def _next_after(last: HistoryPoint, ids: PublicIds, project_id: int) -> str:
    """The cursor after ``last``: its as_of (microseconds), scope and opaque snapshot id."""
    snapshot = ids.encode("snapshot", project_id, last.snapshot_id)
    return f"{to_micros(last.as_of)}.{last.scope}.{snapshot}"


def _cursor(after: str, ids: PublicIds, project_id: int) -> HistoryCursor:
    micros, _, rest = after.partition(".")
    scope, _, snapshot = rest.partition(".")
    try:
        found = ids.decode("snapshot", project_id, int(snapshot))
        if not micros.isdigit() or not scope or found is None:
            raise ValueError(after)
        return from_micros(int(micros)), scope, found
    except (ValueError, OverflowError):
        raise Invalid(
            f"after: not a cursor this history gave: {after[:40]!r}", field="after"
        ) from None
