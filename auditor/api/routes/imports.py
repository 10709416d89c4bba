"""A project's imports (files and API batches): list and show (read, admin), revert (admin)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel

from auditor.api.deps import Admin, Reader, ReadUow, Slug, WriteUow
from auditor.services import imports as service

router = APIRouter(prefix="/api/v1/projects", tags=["imports"])

ImportId = Annotated[int, Path(ge=1, le=2**62)]


class ImportOut(BaseModel):
    id: int
    source: str
    content_hash: str | None
    rows: int
    inserted: int
    duplicates: int
    created_by: str
    created_at: datetime
    reverted_at: datetime | None
    reverted_labels: int | None


class ImportList(BaseModel):
    imports: list[ImportOut]


class RevertOut(BaseModel):
    import_id: int
    deleted: int
    reverted_at: datetime


@router.get("/{slug}/imports", response_model=ImportList)
def list_imports(slug: Slug, uow: ReadUow, _: Reader) -> ImportList:
    """Every import of the project, oldest first, reverted ones included (marked)."""
    views = service.list_imports(uow, slug)
    return ImportList(imports=[ImportOut(**vars(v)) for v in views])


@router.get("/{slug}/imports/{import_id}", response_model=ImportOut)
def get_import(slug: Slug, import_id: ImportId, uow: ReadUow, _: Reader) -> ImportOut:
    return ImportOut(**vars(service.show_import(uow, slug, import_id)))


@router.post("/{slug}/imports/{import_id}/revert", response_model=RevertOut)
def revert_import(slug: Slug, import_id: ImportId, uow: WriteUow, _: Admin) -> RevertOut:
    """Delete the labels of one import in one transaction (admin). A second revert is 409;
    snapshots stay, and the history lists the revert under ``reverts``."""
    result = service.revert_import(uow, slug, import_id)
    return RevertOut(
        import_id=result.import_id, deleted=result.deleted, reverted_at=result.reverted_at
    )
