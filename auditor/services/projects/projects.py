"""Projects and their category vocabulary: create, list, show, add / rename / remove a category.

A category that has labels can be neither renamed nor removed (old labels would change
meaning); the foreign key from labels (ON DELETE RESTRICT) backs the check up.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from auditor.domain import ProjectSettings
from auditor.errors import Conflict, Invalid, NotFound
from auditor.ingestion.schemas import ProjectIn, check_category_name, check_new_categories
from auditor.services.projects.settings import SettingCaps, check_caps
from auditor.storage.db import utc_now
from auditor.storage.project_repository import CategoryRecord, ProjectRecord
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class ProjectView:
    slug: str
    name: str
    created_at: datetime
    categories: tuple[str, ...]
    settings: ProjectSettings
    counts: dict[str, int] | None = None


def _view(uow: UnitOfWork, project: ProjectRecord, with_counts: bool = False) -> ProjectView:
    return ProjectView(
        slug=project.slug,
        name=project.name,
        created_at=project.created_at,
        categories=tuple(c.name for c in uow.projects.categories(project.id)),
        settings=project.settings,
        counts=uow.projects.counts(project.id) if with_counts else None,
    )


def _messages(error: ValidationError) -> str:
    parts = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail["loc"])
        message = _plain(where, detail) or str(detail["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _plain(where: str, detail: Any) -> str | None:
    """The validator's text in plain words for the mistakes people make (issue 27: a bad slug
    printed the regular expression; one category "List should have at least 2 items")."""
    kind, given = detail.get("type"), detail.get("input")
    if where == "slug" and kind == "string_pattern_mismatch":
        suggestion = re.sub(r"[^a-z0-9_-]+", "-", str(given).lower()).strip("-_")[:64]
        example = f" (e.g. {suggestion!r})" if suggestion else ""
        return (
            f"{given!r} is not a slug: use lowercase letters, digits, '-' and '_', starting "
            f"with a letter or a digit, at most 64 characters{example}"
        )
    if where == "categories" and kind == "too_short":
        count = len(given) if isinstance(given, list) else 0
        return (
            f"a project needs at least 2 categories, got {count}"
            + (f" ({', '.join(map(str, given))})" if count else "")
            + ": give two or more, e.g. yes,no"
        )
    return None


def create_project(
    uow: UnitOfWork,
    slug: str,
    categories: list[str],
    caps: SettingCaps | None = None,
    *,
    then: Callable[[UnitOfWork, str], object] | None = None,
    **fields: Any,
) -> ProjectView:
    """Create a project; ``fields`` are ``name`` and the settings of ``ProjectIn``; ``caps``
    bound the costly settings (``InvalidSetting`` naming the one over its cap). ``then(uow,
    slug)`` runs in the same transaction once the project exists (the shells pass the
    default alerts there: all or nothing)."""
    fields.setdefault("name", slug)
    try:
        request = ProjectIn(slug=slug, categories=categories, **fields)
        settings = request.settings()
    except ValidationError as error:
        raise Invalid(_messages(error)) from None
    except ValueError as error:
        raise Invalid(str(error)) from None
    check_caps(settings, caps)
    with uow:
        if uow.projects.find(request.slug) is not None:
            raise Conflict(f"project {request.slug!r} already exists")
        project = uow.projects.create(
            request.slug, request.name, utc_now(), settings, request.categories
        )
        view = _view(uow, project)
        if then is not None:
            then(uow, request.slug)
        uow.commit()
    return view


def list_projects(uow: UnitOfWork) -> list[ProjectView]:
    with uow:
        return [_view(uow, project) for project in uow.projects.all()]


def show_project(uow: UnitOfWork, slug: str) -> ProjectView:
    with uow:
        return _view(uow, uow.require_project(slug), with_counts=True)


def project_settings(uow: UnitOfWork, slug: str) -> ProjectSettings:
    with uow:
        return uow.require_project(slug).settings


def add_categories(uow: UnitOfWork, slug: str, names: list[str]) -> tuple[str, ...]:
    """Append categories at the end of the vocabulary; returns the whole vocabulary."""
    with uow:
        project = uow.require_project(slug, for_update=True)
        existing = uow.projects.categories(project.id)
        try:
            new = check_new_categories(names, [c.name for c in existing])
        except ValueError as error:
            raise Invalid(str(error)) from None
        if not new:
            raise Invalid("no category to add")
        for offset, name in enumerate(new):
            uow.projects.add_category(project.id, len(existing) + offset, name)
        view = _view(uow, project)
        uow.commit()
    return view.categories


def _category_without_labels(
    uow: UnitOfWork, project: ProjectRecord, name: str, verb: str
) -> CategoryRecord:
    categories = {c.name: c for c in uow.projects.categories(project.id)}
    if name not in categories:
        raise NotFound(f"project {project.slug!r} has no category {name!r}")
    category = categories[name]
    count = uow.projects.category_label_count(category.id)
    if count:
        raise Conflict(f"cannot {verb} category {name!r}: {count} label(s) use it")
    return category


def rename_category(uow: UnitOfWork, slug: str, old: str, new: str) -> tuple[str, ...]:
    with uow:
        project = uow.require_project(slug, for_update=True)
        category = _category_without_labels(uow, project, old, "rename")
        try:
            new_name = check_category_name(new)
        except ValueError as error:
            raise Invalid(str(error)) from None
        if new_name in {c.name for c in uow.projects.categories(project.id)} - {old}:
            raise Conflict(f"project {slug!r} already has a category {new_name!r}")
        uow.projects.rename_category(category.id, new_name)
        view = _view(uow, project)
        uow.commit()
    return view.categories


def remove_category(uow: UnitOfWork, slug: str, name: str) -> tuple[str, ...]:
    """Remove an unused category; the ones after it move up one position (indices stay dense)."""
    with uow:
        project = uow.require_project(slug, for_update=True)
        category = _category_without_labels(uow, project, name, "remove")
        uow.projects.remove_category(category.id)
        view = _view(uow, project)
        uow.commit()
    return view.categories
