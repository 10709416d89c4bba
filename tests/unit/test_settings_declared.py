"""A project setting is declared once (``auditor.domain.ProjectSettings``) and every place that
names it follows: the CLI options of ``project create`` and ``stats``, the API's PATCH schema
and GET JSON, and the table in docs/api.md (issue 23 item 5)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from auditor.api.schemas import SettingsOut
from auditor.api.settings_patch import SettingsPatch
from auditor.cli import COMMANDS, load_module_commands
from auditor.cli._settings import SETTING_OPTIONS
from auditor.domain import ProjectSettings

SETTINGS = [f.name for f in dataclasses.fields(ProjectSettings)]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
# Stored per project, not a property of one computation: `auditor stats` has no use for them.
PROJECT_ONLY = ("windows_days", "recompute_interval_seconds")


def test_every_setting_has_one_cli_option_a_patch_field_and_a_json_field() -> None:
    assert list(SETTING_OPTIONS) == SETTINGS
    assert list(SettingsPatch.model_fields) == SETTINGS
    assert list(SettingsOut.model_fields) == SETTINGS
    names = [name for options in SETTING_OPTIONS.values() for name in options]
    assert len(names) == len(set(names))


def test_the_docs_table_lists_every_setting_with_its_option_and_default() -> None:
    rows = re.findall(r"^\| `(\w+)` \| `(--[\w-]+)`.*\| `([^`]+)` \|$", DOCS.read_text(), re.M)
    documented = {name: (option, default) for name, option, default in rows}
    assert list(documented) == SETTINGS
    defaults = ProjectSettings()
    for name, (option, default) in documented.items():
        assert option == SETTING_OPTIONS[name][0], name
        value = getattr(defaults, name)
        shown = str(list(value)).replace(" ", "") if isinstance(value, tuple) else str(value)
        assert default == shown, name


@pytest.mark.parametrize("command", [["project", "create"], ["stats"]])
def test_both_commands_take_a_setting_under_the_same_option_names(command: list[str]) -> None:
    found: Any = load_module_commands(COMMANDS[command[0]][0])[command[0]]
    for part in command[1:]:
        found = found.commands[part]
    taken = {tuple(param.opts) for param in found.params}
    for name, options in SETTING_OPTIONS.items():
        if command == ["stats"] and name in PROJECT_ONLY:
            continue
        assert options in taken, (command, name)
