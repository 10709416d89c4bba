"""Change a project's settings (how its measures are computed).

Snapshots are immutable, so a change applies from the next recompute on; older snapshots
keep the values they were computed with (their metadata says which).
"""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Any

from auditor.domain import (
    MAX_BOOTSTRAP_RESAMPLES,
    MAX_WINDOWS,
    CollapsePolicy,
    IntervalMethod,
    ProjectSettings,
    RaterModel,
    RhoMode,
    RhoUnrated,
    Scale,
    SettingError,
    Weights,
    windows_problem,
)
from auditor.errors import Invalid
from auditor.storage.unit_of_work import UnitOfWork

SETTING_NAMES = tuple(f.name for f in dataclasses.fields(ProjectSettings))
_ENUMS: dict[str, type[StrEnum]] = {
    "collapse": CollapsePolicy,
    "rho_mode": RhoMode,
    "rho_unrated": RhoUnrated,
    "rater_model": RaterModel,
    "interval_method": IntervalMethod,
    "scale": Scale,
    "weights": Weights,
}
_INTEGERS = ("bootstrap_resamples", "recompute_interval_seconds")


class InvalidSetting(Invalid):
    """A bad setting; ``field`` names it (shells point at it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, field=field)


@dataclasses.dataclass(frozen=True)
class SettingCaps:
    """The most a project may ask for (the operator may lower the domain's hard caps)."""

    max_bootstrap_resamples: int = MAX_BOOTSTRAP_RESAMPLES
    max_windows: int = MAX_WINDOWS


def check_caps(
    settings: ProjectSettings, caps: SettingCaps | None = None, changed: Any = None
) -> None:
    """Raise ``InvalidSetting`` naming the setting over its cap. ``changed``: only these
    settings are checked (a cap lowered later does not block changing something else)."""
    caps = caps or SettingCaps()
    changed = set(SETTING_NAMES if changed is None else changed)
    resamples = min(caps.max_bootstrap_resamples, MAX_BOOTSTRAP_RESAMPLES)
    windows = min(caps.max_windows, MAX_WINDOWS)
    if "bootstrap_resamples" in changed and settings.bootstrap_resamples > resamples:
        raise InvalidSetting(
            "bootstrap_resamples",
            f"bootstrap_resamples {settings.bootstrap_resamples} is over the cap of {resamples}",
        )
    if "windows_days" in changed and len(settings.windows_days) > windows:
        raise InvalidSetting(
            "windows_days",
            f"windows_days has {len(settings.windows_days)} windows; the cap is {windows}",
        )


def _coerce(name: str, value: Any) -> Any:
    if name in _ENUMS:
        try:
            return _ENUMS[name](value)
        except ValueError:
            allowed = ", ".join(member.value for member in _ENUMS[name])
            raise InvalidSetting(name, f"{name} must be one of {allowed}, got {value!r}") from None
    if name == "windows_days":
        days = list(value) if isinstance(value, list | tuple) else [value]
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in days):
            raise InvalidSetting(name, f"windows_days must be whole days, got {value!r}")
        problem = windows_problem(days)
        if problem is not None:
            raise InvalidSetting(name, problem)
        return tuple(sorted(days))
    if name in _INTEGERS and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidSetting(name, f"{name} must be an integer, got {value!r}")
    if name == "interval_level" and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise InvalidSetting(name, f"interval_level must be a number, got {value!r}")
    return value


def update_project_settings(
    uow: UnitOfWork, slug: str, caps: SettingCaps | None = None, **fields: Any
) -> ProjectSettings:
    """Change the named settings of project ``slug`` and return all of them.

    Every value is checked by ``ProjectSettings`` before anything is written; a bad one raises
    ``InvalidSetting`` naming the field, and nothing changes.
    """
    for name in fields:
        if name not in SETTING_NAMES:
            known = ", ".join(SETTING_NAMES)
            raise InvalidSetting(name, f"unknown setting {name!r} (settings: {known})")
    values = {name: _coerce(name, value) for name, value in fields.items()}
    with uow:
        project = uow.require_project(slug, for_update=True)
        try:
            settings = dataclasses.replace(project.settings, **values)
        except SettingError as error:  # the field named by the domain, not read from words
            raise InvalidSetting(error.field, str(error)) from None
        check_caps(settings, caps, changed=values)
        uow.projects.save_settings(project.id, settings)
        uow.commit()
    return settings
