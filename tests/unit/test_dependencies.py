"""What production installs is what production loads (issue 23 item 7)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _requirement_names(entries: list[str]) -> set[str]:
    return {re.split(r"[<>=\[;! ]", entry, maxsplit=1)[0].lower() for entry in entries}


def test_a_driver_production_never_loads_is_no_runtime_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = _requirement_names(project["dependencies"])
    sources = [*(REPO / "auditor").rglob("*.py"), *(REPO / "workers").rglob("*.py")]
    loaded = "\n".join(path.read_text() for path in sources)
    assert "adbc_driver_sqlite" not in loaded
    assert "adbc-driver-sqlite" not in runtime
    assert "adbc-driver-sqlite" in _requirement_names(project["optional-dependencies"]["dev"])
