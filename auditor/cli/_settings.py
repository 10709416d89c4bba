"""The command-line options of the project settings, declared once: ``auditor project create``
and ``auditor stats`` take a setting under the same option name (issue 23 item 5).

One entry per field of ``auditor.domain.ProjectSettings`` (tests/unit/test_settings_declared.py
ties the fields to this table, to the API's PATCH schema, to the GET JSON and to the table in
docs/api.md). The first name is the setting's; later ones are the names ``auditor stats`` had
before, still accepted.
"""

from __future__ import annotations

from typing import Any

import typer

SETTING_OPTIONS: dict[str, tuple[str, ...]] = {
    "collapse": ("--collapse",),
    "rho_mode": ("--rho-mode",),
    "rho_unrated": ("--rho-unrated",),
    "rater_model": ("--rater-model",),
    "interval_method": ("--interval-method", "--ci"),
    "interval_level": ("--interval-level", "--level"),
    "bootstrap_resamples": ("--bootstrap-resamples", "--resamples"),
    "windows_days": ("--windows",),
    "recompute_interval_seconds": ("--recompute-interval",),
    "scale": ("--scale",),
    "weights": ("--weights",),
}


def setting_option(name: str, default: Any, help: str | None = None) -> Any:
    """The ``typer.Option`` of project setting ``name``."""
    return typer.Option(default, *SETTING_OPTIONS[name], help=help)
