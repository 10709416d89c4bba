"""Integrations: Label Studio's webhook (docs/integrations.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from auditor.api.deps import Ingester, Slug, WriteUow
from auditor.services.label_studio import receive_event

router = APIRouter(prefix="/api/v1/projects", tags=["integrations"])


@router.post("/{slug}/integrations/label-studio")
def label_studio_webhook(
    slug: Slug,
    uow: WriteUow,
    _: Ingester,
    event: dict[str, Any] = Body(
        ..., description="A Label Studio webhook event (action, annotation(s), task, project)"
    ),
) -> dict[str, Any]:
    """Take a Label Studio webhook event (ingest key as ``Authorization: Bearer``, a header
    set on the webhook). ANNOTATION_CREATED / ANNOTATIONS_CREATED store one label per
    annotation (idempotent on its id), ANNOTATION_UPDATED replaces it, ANNOTATION_DELETED /
    ANNOTATIONS_DELETED remove it; other actions answer 200 ``{"ignored": action}`` (Label
    Studio retries failures). The answer counts what happened."""
    return receive_event(uow, slug, event)
