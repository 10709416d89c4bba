"""The body of the project settings update (``PATCH /projects/{slug}/settings``): every
setting of ``auditor.domain.ProjectSettings``, optional, with its range in the schema.

``tests/unit/test_settings_declared.py`` ties its fields to the dataclass, the CLI options,
the JSON and the docs' settings table.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict

from auditor.api.schemas import JsonInt
from auditor.domain import (
    MAX_BOOTSTRAP_RESAMPLES,
    MAX_WINDOWS,
    CollapsePolicy,
    IntervalMethod,
    RaterModel,
    RhoMode,
    RhoUnrated,
    Scale,
    Weights,
    windows_problem,
)

# operators may lower it (422 names it)
Resamples = Annotated[int, Field(ge=10, le=MAX_BOOTSTRAP_RESAMPLES), JsonInt]
WindowDays = Annotated[int, Field(ge=1, le=9999), JsonInt]


def _windows_once(days: list[int]) -> list[int]:
    problem = windows_problem(days)
    if problem is not None:
        raise ValueError(problem)
    return days


RecomputeSeconds = Annotated[int, Field(ge=1, le=30 * 86400), JsonInt]


class SettingsPatch(BaseModel):
    """Settings to change; a field absent or null keeps its value."""

    model_config = ConfigDict(extra="forbid")

    collapse: CollapsePolicy | None = None
    rho_mode: RhoMode | None = None
    rho_unrated: RhoUnrated | None = None
    rater_model: RaterModel | None = None
    interval_method: IntervalMethod | None = None
    interval_level: Annotated[float, Strict(), Field(ge=0.5, lt=1.0)] | None = None
    bootstrap_resamples: Resamples | None = None
    windows_days: (
        Annotated[
            list[WindowDays],
            Field(
                min_length=1,
                max_length=MAX_WINDOWS,
                description="rolling windows in days: at least one, each once",
                json_schema_extra={"uniqueItems": True},
            ),
            AfterValidator(_windows_once),
        ]
        | None
    ) = None
    recompute_interval_seconds: RecomputeSeconds | None = None
    scale: Scale | None = Field(
        default=None, description="nominal, or ordinal: the categories' order is the scale's"
    )
    weights: Weights | None = Field(
        default=None, description="agreement weights of an ordinal scale: quadratic or linear"
    )

    def fields(self) -> dict[str, Any]:
        return {name: value for name, value in dict(self).items() if value is not None}
