"""Projects: create (operator token), read, settings, categories."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Request, status

from auditor.api.deps import Admin, Anyone, Ids, Operator, Reader, ReadUow, Slug, WriteUow
from auditor.api.errors import ApiError
from auditor.api.hygiene import CheckedJsonRoute
from auditor.api.schemas import (
    CategoriesIn,
    CategoriesOut,
    KeyOut,
    ProjectCreate,
    ProjectCreated,
    ProjectOut,
    SettingsOut,
)
from auditor.api.settings_patch import SettingsPatch
from auditor.config import Settings
from auditor.domain import ProjectSettings
from auditor.services.access.keys import create_key
from auditor.services.alerts.rules import add_default_alerts
from auditor.services.projects import projects as service
from auditor.services.projects.settings import SettingCaps, update_project_settings
from auditor.services.recompute.recompute import find_project_id

router = APIRouter(prefix="/api/v1/projects", tags=["projects"], route_class=CheckedJsonRoute)


def settings_out(settings: ProjectSettings) -> SettingsOut:
    values = dataclasses.asdict(settings)
    for name, value in values.items():
        values[name] = getattr(value, "value", value)
    values["windows_days"] = list(settings.windows_days)
    return SettingsOut(**values)


def project_out(view: service.ProjectView) -> ProjectOut:
    return ProjectOut(
        slug=view.slug,
        name=view.name,
        created_at=view.created_at,
        categories=list(view.categories),
        settings=settings_out(view.settings),
        counts=view.counts,
    )


@router.post("", status_code=status.HTTP_201_CREATED, response_model=ProjectCreated)
def create_project(body: ProjectCreate, uow: WriteUow, _: Operator, ids: Ids) -> ProjectCreated:
    """Create a project and its first admin key (operator token only; the key is shown once)."""
    fields: dict[str, Any] = {"name": body.name} if body.name else {}
    then = add_default_alerts if body.default_rules else None
    view = service.create_project(uow, body.slug, body.categories, then=then, **fields)
    key, secret = create_key(uow, view.slug, "admin", "created with the project")
    out = project_out(view)
    shown_id = ids.encode("key", find_project_id(uow, view.slug), key.id)  # no global count
    admin_key = KeyOut(id=shown_id, role="admin", prefix=key.prefix, key=secret)
    return ProjectCreated(**out.model_dump(), admin_key=admin_key)


@router.get("/{slug}", response_model=ProjectOut)
def get_project(slug: Slug, uow: ReadUow, _: Anyone) -> ProjectOut:
    """The project, its categories, settings and row counts (any role)."""
    return project_out(service.show_project(uow, slug))


@router.get("/{slug}/settings", response_model=SettingsOut)
def get_settings(slug: Slug, uow: ReadUow, _: Reader) -> SettingsOut:
    return settings_out(service.project_settings(uow, slug))


@router.patch("/{slug}/settings", response_model=SettingsOut)
def update_settings(
    request: Request, slug: Slug, body: SettingsPatch, uow: WriteUow, _: Admin
) -> SettingsOut:
    """Change some settings (admin); absent or null fields keep their value. Snapshots
    already written keep the settings they were computed with; the next recompute uses the
    new ones. A bad value is 422 naming the field."""
    caps = caps_of(request.app.state.settings)
    return settings_out(update_project_settings(uow, slug, caps, **body.fields()))


def caps_of(settings: Settings) -> SettingCaps:
    return SettingCaps(settings.max_bootstrap_resamples, settings.max_windows)


@router.get("/{slug}/categories", response_model=CategoriesOut)
def get_categories(slug: Slug, uow: ReadUow, _: Anyone) -> CategoriesOut:
    """The vocabulary labels must use, in order (any role: ingest tools need it)."""
    return CategoriesOut(categories=list(service.show_project(uow, slug).categories))


@router.post("/{slug}/categories", response_model=CategoriesOut)
def add_categories(slug: Slug, body: CategoriesIn, uow: WriteUow, _: Admin) -> CategoriesOut:
    """Append categories at the end of the vocabulary (admin)."""
    existing = set(service.show_project(uow, slug).categories)
    taken = [name for name in body.names if name in existing]
    if taken:
        raise ApiError(409, f"project {slug!r} already has the categories {taken}")
    return CategoriesOut(categories=list(service.add_categories(uow, slug, body.names)))
