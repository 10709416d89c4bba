"""A project's imports (files and API batches): list and show (read, admin), revert (admin)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel

from auditor.api.deps import OPAQUE_MAX, Admin, Ids, Reader, ReadUow, Slug, WriteUow
from auditor.errors import Conflict, NotFound
from auditor.services.access.public_ids import PublicIds
from auditor.services.ingest import imports as service

router = APIRouter(prefix="/api/v1/projects", tags=["imports"])

# Opaque, like every id a project key sees: the global sequence would tell other tenants'
# volume (auditor.services.access.public_ids).
ImportId = Annotated[int, Path(ge=0, le=OPAQUE_MAX)]


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


class RepeatsUndone(BaseModel):
    """The planned repeats the deleted labels had fulfilled: open again, expired (past their
    time, or the rater has a newer open repeat of the item), or fulfilled by a later label."""

    reopened: int = 0
    expired: int = 0
    refulfilled: int = 0


class RevertOut(BaseModel):
    import_id: int
    deleted: int
    reverted_at: datetime
    repeats: RepeatsUndone


def _shown(view: object, ids: PublicIds, project_id: int) -> ImportOut:
    fields = vars(view)
    return ImportOut(**{**fields, "id": ids.encode("import", project_id, fields["id"])})


def _stored(ids: PublicIds, project_id: int, slug: str, import_id: int) -> int:
    found = ids.decode("import", project_id, import_id)
    if found is None:
        raise NotFound(f"project {slug!r} has no import {import_id}")
    return found


@router.get("/{slug}/imports", response_model=ImportList)
def list_imports(slug: Slug, uow: ReadUow, who: Reader, ids: Ids) -> ImportList:
    """Every import of the project, oldest first, reverted ones included (marked)."""
    views = service.list_imports(uow, slug)
    return ImportList(imports=[_shown(v, ids, who.project_id) for v in views])


@router.get("/{slug}/imports/{import_id}", response_model=ImportOut)
def get_import(slug: Slug, import_id: ImportId, uow: ReadUow, who: Reader, ids: Ids) -> ImportOut:
    stored = _stored(ids, who.project_id, slug, import_id)
    try:
        view = service.show_import(uow, slug, stored)
    except NotFound:
        raise NotFound(f"project {slug!r} has no import {import_id}") from None
    return _shown(view, ids, who.project_id)


@router.post("/{slug}/imports/{import_id}/revert", response_model=RevertOut)
def revert_import(
    slug: Slug, import_id: ImportId, uow: WriteUow, who: Admin, ids: Ids
) -> RevertOut:
    """Delete the labels of one import in one transaction (admin). A second revert is 409;
    snapshots stay, and the history lists the revert under ``reverts``. Planned repeats
    these labels fulfilled are fulfilled no more (``repeats``: what became of them)."""
    stored = _stored(ids, who.project_id, slug, import_id)
    try:
        result = service.revert_import(uow, slug, stored)
    except NotFound:
        raise NotFound(f"project {slug!r} has no import {import_id}") from None
    except Conflict as conflict:  # name the import as the caller knows it (opaque)
        said = str(conflict).replace(f"import {stored} ", f"import {import_id} ", 1)
        raise Conflict(said) from None
    undone = result.repeats
    return RevertOut(
        import_id=import_id,
        deleted=result.deleted,
        reverted_at=result.reverted_at,
        repeats=RepeatsUndone(
            reopened=undone.reopened, expired=undone.expired, refulfilled=undone.refulfilled
        ),
    )
