"""Integrations: Label Studio's webhook (docs/integrations.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, Strict

from auditor.api.deps import LabelStudioKey, Slug, WriteUow
from auditor.api.hygiene import CheckedJsonRoute
from auditor.services.label_studio.webhook import receive_event

# Checked JSON like every body: a NUL is 422 naming it, a repeated key 400.
router = APIRouter(prefix="/api/v1/projects", tags=["integrations"], route_class=CheckedJsonRoute)
LABEL_STUDIO_PATH = "/integrations/label-studio"  # under /api/v1/projects/{slug}


class LabelStudioAnnotation(BaseModel):
    """An annotation as Label Studio sends it (task, completed_by, result, was_cancelled,
    created_at, updated_at, parent_prediction...); only its id is required here."""

    model_config = ConfigDict(extra="allow")

    # strict: a numeric string is a string id (its length counts), not coerced to an integer
    id: Annotated[int, Strict()] | Annotated[str, Strict(), Field(min_length=1, max_length=180)]


class LabelStudioEvent(BaseModel):
    """A Label Studio webhook event: its action and, for annotation events, the annotation(s)
    (a list under ``annotation`` for the bulk action); ``tasks`` for TASKS_DELETED."""

    model_config = ConfigDict(extra="allow")

    action: str
    annotation: LabelStudioAnnotation | list[LabelStudioAnnotation] | None = None
    annotations: list[LabelStudioAnnotation] | None = None


@router.post("/{slug}" + LABEL_STUDIO_PATH)
def label_studio_webhook(
    slug: Slug,
    uow: WriteUow,
    _: LabelStudioKey,
    event: LabelStudioEvent,
) -> dict[str, Any]:
    """Take a Label Studio webhook event (a ``label-studio`` key as ``Authorization: Bearer``,
    a header set on the webhook; no other key is taken). ANNOTATION_CREATED /
    ANNOTATIONS_CREATED store one label per annotation (idempotent on its id),
    ANNOTATION_UPDATED replaces it, ANNOTATION_DELETED / ANNOTATIONS_DELETED remove it,
    TASKS_DELETED removes the labels of the tasks' annotations and predictions; other actions
    answer 200 ``{"ignored": action}``. Label Studio never retries a refused call: every
    answer other than 200 is counted for the project (dashboard, /metrics, the default rule),
    and `auditor label-studio sync` recovers what was lost. The answer counts what
    happened."""
    return receive_event(uow, slug, event.model_dump(exclude_none=True))
