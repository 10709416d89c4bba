"""``GET /api/v1/key``: which project and role the caller's key has, so a client given only a
URL and a key (``auditor.client.Client(url, key)``) finds the project it works on."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from auditor.api.deps import caller
from auditor.services.access.keys import Principal

router = APIRouter(prefix="/api/v1", tags=["projects"])


class KeyInfo(BaseModel):
    project: str = Field(description="the slug of the key's project")
    role: Literal["ingest", "read", "admin"]


@router.get("/key", response_model=KeyInfo)
def key_info(who: Annotated[Principal, Depends(caller)]) -> KeyInfo:
    """The project and role of the key in ``Authorization: Bearer <key>`` (any role; 401 for
    no key, or an unknown or revoked one)."""
    return KeyInfo(project=who.project_slug, role=who.role.value)
