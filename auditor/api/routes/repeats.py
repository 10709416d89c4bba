"""The repeat planner: which items a rater should see again (docs/repeats.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from auditor.api.deps import Anyone, Reader, ReadUow, Slug, WriteUow
from auditor.services.repeats.planner import (
    MAX_LIMIT,
    REQUEST_ID_MAX,
    plan_repeats,
    repeat_status,
)

router = APIRouter(prefix="/api/v1/projects", tags=["repeats"])


class PlannedItem(BaseModel):
    item: str
    first_labeled_at: str
    reason: str


class RepeatPlanOut(BaseModel):
    rater: str
    items: list[PlannedItem]
    needed: int
    have: int
    outstanding: int


class RaterRepeatsOut(BaseModel):
    rater: str
    planned: int
    fulfilled: int
    expired: int
    outstanding: int
    have: int
    needed: int
    self_agreement: float | None


class RepeatStatusOut(BaseModel):
    raters: list[RaterRepeatsOut]


@router.get("/{slug}/repeats", response_model=RepeatStatusOut)
def get_repeat_status(slug: Slug, uow: ReadUow, _: Reader) -> RepeatStatusOut:
    """Per rater (read, admin): repeats planned, fulfilled, expired and outstanding; the
    repeated items she has and needs for the wanted precision of her self-agreement, and that
    self-agreement (``auditor repeats status``)."""
    rows = repeat_status(uow, slug)
    return RepeatStatusOut(raters=[RaterRepeatsOut(**vars(row)) for row in rows])


@router.get("/{slug}/raters/{rater}/repeats", response_model=RepeatPlanOut)
def get_repeats(
    slug: Slug,
    rater: Annotated[str, Path(min_length=1, max_length=200, description="rater id")],
    uow: WriteUow,
    _: Anyone,
    limit: Annotated[int, Query(ge=0, le=MAX_LIMIT)] = 10,
    request_id: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=REQUEST_ID_MAX,
            description="the same request_id gets the same plan again (nothing new planned)",
        ),
    ] = None,
) -> RepeatPlanOut:
    """Up to ``limit`` of the rater's earlier items to show her again, unknown to her
    (ingest, read, admin). They are recorded as planned: the rater's next label on one
    fulfils it. ``needed``: repeated items for the wanted precision of her self-agreement;
    ``have``: her repeated items; ``outstanding``: planned repeats still open. ``limit=0``
    only reports the counts."""
    answer = plan_repeats(uow, slug, rater, limit, request_id=request_id)
    return RepeatPlanOut.model_validate(answer)
