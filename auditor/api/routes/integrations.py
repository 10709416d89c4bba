"""Integrations: Label Studio's webhook (docs/integrations.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, Strict

from auditor.api.deps import Ingester, Slug, WriteUow
from auditor.api.hygiene import CheckedJsonRoute
from auditor.services.ingest.label_studio import receive_event

# Checked JSON like every body: a NUL is 422 naming it, a repeated key 400.
router = APIRouter(prefix="/api/v1/projects", tags=["integrations"], route_class=CheckedJsonRoute)


class LabelStudioAnnotation(BaseModel):
    """An annotation as Label Studio sends it (task, completed_by, result, was_cancelled,
    created_at, updated_at...); only its id is required here."""

    model_config = ConfigDict(extra="allow")

    # strict: a numeric string is a string id (its length counts), not coerced to an integer
    id: Annotated[int, Strict()] | Annotated[str, Strict(), Field(min_length=1, max_length=180)]


class LabelStudioEvent(BaseModel):
    """A Label Studio webhook event: its action and, for annotation events, the annotation(s)."""

    model_config = ConfigDict(extra="allow")

    action: str
    annotation: LabelStudioAnnotation | list[LabelStudioAnnotation] | None = None
    annotations: list[LabelStudioAnnotation] | None = None


@router.post("/{slug}/integrations/label-studio")
def label_studio_webhook(
    slug: Slug,
    uow: WriteUow,
    _: Ingester,
    event: LabelStudioEvent,
) -> dict[str, Any]:
    """Take a Label Studio webhook event (ingest key as ``Authorization: Bearer``, a header
    set on the webhook). ANNOTATION_CREATED / ANNOTATIONS_CREATED store one label per
    annotation (idempotent on its id), ANNOTATION_UPDATED replaces it, ANNOTATION_DELETED /
    ANNOTATIONS_DELETED remove it; other actions answer 200 ``{"ignored": action}`` (Label
    Studio retries failures). The answer counts what happened."""
    return receive_event(uow, slug, event.model_dump(exclude_none=True))
