"""Pydantic input schemas: a label as the API receives it, and a new project.

The label schema only fixes the shape (field names and JSON types); the rules that need the
whole batch or the project's vocabulary are in ``batch.validate_batch``, the single place
where labels are judged.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from auditor.domain import (
    CollapsePolicy,
    IntervalMethod,
    ProjectSettings,
    RaterModel,
    RhoMode,
    RhoUnrated,
    Scale,
    Weights,
    windows_problem,
)
from auditor.ingestion.text import clean_name

SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
CATEGORY_NAME_MAX = 100
PROJECT_NAME_MAX = 200
_DEFAULTS = ProjectSettings()


def check_category_name(name: str) -> str:
    """A category name as stored: trimmed, NFC-normalised, 1..100 characters, no control,
    bidi-control or zero-width characters (``text``)."""
    text = clean_name(name, f"category name {name.strip()!r}")
    if not text:
        raise ValueError("a category name is empty")
    if len(text) > CATEGORY_NAME_MAX:
        raise ValueError(f"category name {text[:20]!r}... is longer than {CATEGORY_NAME_MAX}")
    return text


def check_new_categories(names: list[str], existing: list[str] | tuple[str, ...] = ()) -> list[str]:
    checked = [check_category_name(name) for name in names]
    seen = set(existing)
    for name in checked:
        if name in seen:
            raise ValueError(f"category {name!r} appears twice")
        seen.add(name)
    return checked


class ProjectIn(BaseModel):
    """A new project: slug, display name, its categories in order, and its settings."""

    model_config = ConfigDict(extra="forbid")

    slug: Annotated[str, Field(pattern=SLUG_PATTERN)]
    name: Annotated[str, Field(min_length=1, max_length=PROJECT_NAME_MAX)]
    categories: Annotated[list[str], Field(min_length=2)]
    collapse: CollapsePolicy = _DEFAULTS.collapse
    rho_mode: RhoMode = _DEFAULTS.rho_mode
    rho_unrated: RhoUnrated = _DEFAULTS.rho_unrated
    rater_model: RaterModel = _DEFAULTS.rater_model
    interval_method: IntervalMethod = _DEFAULTS.interval_method
    interval_level: float = _DEFAULTS.interval_level
    bootstrap_resamples: int = _DEFAULTS.bootstrap_resamples
    windows_days: tuple[int, ...] = _DEFAULTS.windows_days
    recompute_interval_seconds: int = _DEFAULTS.recompute_interval_seconds
    scale: Scale = _DEFAULTS.scale
    weights: Weights = _DEFAULTS.weights

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        cleaned = clean_name(name, "project name")
        if not cleaned:
            raise ValueError("project name is empty")
        return cleaned

    @field_validator("categories")
    @classmethod
    def _categories(cls, names: list[str]) -> list[str]:
        return check_new_categories(names)

    @field_validator("windows_days")
    @classmethod
    def _windows(cls, days: tuple[int, ...]) -> tuple[int, ...]:
        # A repeat is refused, not dropped (issue 26). No window at all stays possible here
        # (a cumulative-only project, as tests and the service use); the CLI and the API,
        # where a person types the list, ask for at least one (``windows_problem``).
        problem = windows_problem(days) if days else None
        if problem is not None:
            raise ValueError(problem)
        return days

    def settings(self) -> ProjectSettings:
        """The project settings (ValueError when a value is out of range)."""
        return ProjectSettings(
            collapse=self.collapse,
            rho_mode=self.rho_mode,
            rho_unrated=self.rho_unrated,
            rater_model=self.rater_model,
            interval_method=self.interval_method,
            interval_level=self.interval_level,
            bootstrap_resamples=self.bootstrap_resamples,
            windows_days=tuple(sorted(self.windows_days)),
            recompute_interval_seconds=self.recompute_interval_seconds,
            scale=self.scale,
            weights=self.weights,
        )
