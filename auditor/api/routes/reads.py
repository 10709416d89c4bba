"""Raters, items and sessions of a project (read, admin), and the rater report."""

from __future__ import annotations

from dataclasses import asdict, replace
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import AfterValidator, BaseModel

from auditor.api.deps import OPAQUE_MAX, Ids, Reader, ReadUow, Slug
from auditor.api.schemas import (
    ItemList,
    ItemOut,
    RaterList,
    RaterOut,
    RaterReport,
    SessionList,
    SessionOut,
)
from auditor.ingestion.text import nfc
from auditor.services.queries import project_reads as service

router = APIRouter(prefix="/api/v1/projects", tags=["raters, items, sessions"])

Limit = Annotated[int, Query(ge=1, le=1000, description="entries per page")]
After = Annotated[str | None, Query(max_length=200, description="the last id of the previous page")]
# Ids are stored NFC-normalised (auditor.ingestion.text): a lookup is normalised the same way,
# so "José" typed with a combining accent finds the stored rater.
ExternalId = Annotated[str, Path(min_length=1, max_length=200), AfterValidator(nfc)]


@router.get("/{slug}/raters", response_model=RaterList)
def list_raters(
    slug: Slug, uow: ReadUow, _: Reader, limit: Limit = 100, after: After = None
) -> RaterList:
    """Raters in id order with their label counts; page with ``after``."""
    rows = service.list_raters(uow, slug, after, limit)
    next_after = rows[-1].rater if len(rows) == limit else None
    return RaterList(raters=[RaterOut(**asdict(row)) for row in rows], next_after=next_after)


@router.get("/{slug}/raters/{rater}", response_model=RaterOut)
def get_rater(slug: Slug, rater: ExternalId, uow: ReadUow, _: Reader) -> RaterOut:
    return RaterOut(**asdict(service.get_rater(uow, slug, rater)))


@router.get("/{slug}/raters/{rater}/report", response_model=RaterReport)
def rater_report(
    slug: Slug,
    rater: ExternalId,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    points: Annotated[int, Query(ge=1, le=5000)] = 200,
) -> BaseModel:
    """Self-agreement, random-choice share, S against the group (models: S and kappa_VA), the
    rater's row of pairwise Cohen kappa, all from the latest cumulative snapshot, and the
    cumulative history of each (at most ``points`` per metric)."""
    report = service.rater_report(uow, slug, rater, points)
    report["snapshot_id"] = ids.maybe("snapshot", who.project_id, report["snapshot_id"])
    opaque = partial(ids.encode, "snapshot", who.project_id)
    report["history"] = {
        metric: [{**asdict(point), "snapshot_id": opaque(point.snapshot_id)} for point in points]
        for metric, points in report["history"].items()
    }
    return RaterReport(**report)


@router.get("/{slug}/items", response_model=ItemList)
def list_items(
    slug: Slug, uow: ReadUow, _: Reader, limit: Limit = 100, after: After = None
) -> ItemList:
    rows = service.list_items(uow, slug, after, limit)
    next_after = rows[-1].item if len(rows) == limit else None
    return ItemList(items=[ItemOut(**asdict(row)) for row in rows], next_after=next_after)


@router.get("/{slug}/items/{item}", response_model=ItemOut)
def get_item(slug: Slug, item: ExternalId, uow: ReadUow, _: Reader) -> ItemOut:
    return ItemOut(**asdict(service.get_item(uow, slug, item)))


@router.get("/{slug}/sessions", response_model=SessionList)
def list_sessions(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    limit: Limit = 100,
    after: Annotated[int | None, Query(ge=0, le=OPAQUE_MAX, description="id cursor")] = None,
    rater: Annotated[str | None, Query(min_length=1, max_length=200), AfterValidator(nfc)] = None,
) -> SessionList:
    """Sessions in storage order, optionally of one rater; ids are opaque (page with
    ``after`` = the previous page's ``next_after``)."""
    cursor = None if after is None else ids.decode("session", who.project_id, after)
    rows = [
        replace(row, id=ids.encode("session", who.project_id, row.id))
        for row in service.list_sessions(uow, slug, rater, cursor, limit)
    ]
    next_after = rows[-1].id if len(rows) == limit else None
    return SessionList(sessions=[SessionOut(**asdict(row)) for row in rows], next_after=next_after)
