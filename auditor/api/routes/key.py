"""``GET /api/v1/key``: which project and role the caller's key has, so a client given only a
URL and a key (``auditor.client.Client(url, key)``) finds the project it works on."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from auditor.api.deps import caller
from auditor.api.errors import ApiError
from auditor.services.access.keys import Principal, Role

router = APIRouter(prefix="/api/v1", tags=["projects"])


KeyRole = Literal["ingest", "read", "admin"]
ROLES: dict[Role, KeyRole] = {Role.INGEST: "ingest", Role.READ: "read", Role.ADMIN: "admin"}


class KeyInfo(BaseModel):
    project: str = Field(description="the slug of the key's project")
    role: KeyRole


@router.get("/key", response_model=KeyInfo)
def key_info(who: Annotated[Principal, Depends(caller)]) -> KeyInfo:
    """The project and role of the key in ``Authorization: Bearer <key>`` (ingest, read or
    admin; 401 for no key, or an unknown or revoked one; 403 for a ``label-studio`` key, which
    opens Label Studio's webhook route and nothing else)."""
    role = ROLES.get(who.role)
    if role is None:
        raise ApiError(403, "a label-studio key opens Label Studio's webhook route only")
    return KeyInfo(project=who.project_slug, role=role)
