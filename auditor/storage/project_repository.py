"""Projects and their category vocabulary, as plain records: the services above never see an
ORM row. ``require`` is the one lookup of a project by slug (``NotFound`` naming it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session as OrmSession

from auditor.domain import ProjectSettings, RepeatSettings
from auditor.errors import NotFound
from auditor.storage.models import Category, Item, Label, Project, Rater, Session


@dataclass(frozen=True)
class ProjectRecord:
    id: int
    slug: str
    name: str
    created_at: datetime
    settings: ProjectSettings
    repeat_settings: RepeatSettings


@dataclass(frozen=True)
class CategoryRecord:
    id: int
    position: int
    name: str


def _record(project: Project) -> ProjectRecord:
    return ProjectRecord(
        project.id,
        project.slug,
        project.name,
        project.created_at,
        project.settings(),
        project.repeat_settings(),
    )


class ProjectRepository:
    def __init__(self, session: OrmSession) -> None:
        self.session = session

    def _row(self, slug: str, *, for_update: bool = False) -> Project | None:
        statement = select(Project).where(Project.slug == slug)
        if for_update:
            statement = statement.with_for_update()  # ignored on SQLite (one writer anyway)
        return self.session.scalars(statement).one_or_none()

    def find(self, slug: str, *, for_update: bool = False) -> ProjectRecord | None:
        project = self._row(slug, for_update=for_update)
        return None if project is None else _record(project)

    def require(self, slug: str, *, for_update: bool = False) -> ProjectRecord:
        """Project ``slug`` (its row locked until the transaction ends with ``for_update``);
        ``NotFound`` when there is none."""
        project = self.find(slug, for_update=for_update)
        if project is None:
            raise NotFound(f"no project {slug!r}")
        return project

    def by_id(self, project_id: int) -> ProjectRecord | None:
        project = self.session.get(Project, project_id)
        return None if project is None else _record(project)

    def all(self) -> list[ProjectRecord]:
        return [_record(p) for p in self.session.scalars(select(Project).order_by(Project.slug))]

    def create(
        self,
        slug: str,
        name: str,
        created_at: datetime,
        settings: ProjectSettings,
        category_names: Sequence[str],
    ) -> ProjectRecord:
        project = Project(slug=slug, name=name, created_at=created_at)
        project.apply_settings(settings)
        self.session.add(project)
        self.session.flush()
        for position, category in enumerate(category_names):
            self.session.add(Category(project_id=project.id, position=position, name=category))
        self.session.flush()
        return _record(project)

    def save_settings(self, project_id: int, settings: ProjectSettings) -> None:
        self.session.get_one(Project, project_id).apply_settings(settings)
        self.session.flush()

    def save_repeat_settings(self, project_id: int, settings: RepeatSettings) -> None:
        self.session.get_one(Project, project_id).apply_repeat_settings(settings)
        self.session.flush()

    def categories(self, project_id: int) -> list[CategoryRecord]:
        statement = (
            select(Category).where(Category.project_id == project_id).order_by(Category.position)
        )
        return [CategoryRecord(c.id, c.position, c.name) for c in self.session.scalars(statement)]

    def add_category(self, project_id: int, position: int, name: str) -> None:
        self.session.add(Category(project_id=project_id, position=position, name=name))
        self.session.flush()

    def rename_category(self, category_id: int, name: str) -> None:
        self.session.get_one(Category, category_id).name = name
        self.session.flush()

    def remove_category(self, category_id: int) -> None:
        """Delete a category; the ones after it move up one position (indices stay dense)."""
        category = self.session.get_one(Category, category_id)
        project_id, removed = category.project_id, category.position
        self.session.delete(category)
        self.session.flush()
        later = select(Category).where(
            Category.project_id == project_id, Category.position > removed
        )
        for moved in self.session.scalars(later.order_by(Category.position)).all():
            moved.position -= 1
            self.session.flush()  # one at a time: (project, position) is unique

    def category_label_count(self, category_id: int) -> int:
        statement = select(func.count()).where(Label.category_id == category_id)
        return int(self.session.scalar(statement) or 0)

    def counts(self, project_id: int) -> dict[str, int]:
        """Rows per table for one project (labels, items, raters, sessions)."""
        tables = (("labels", Label), ("items", Item), ("raters", Rater), ("sessions", Session))
        return {
            name: int(
                self.session.scalar(select(func.count()).where(model.project_id == project_id)) or 0
            )
            for name, model in tables
        }
