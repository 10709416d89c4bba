"""The ``cli`` fixture of the report tests: the command line on each module's ``seeded``
database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings


@pytest.fixture
def cli(seeded: str, monkeypatch: pytest.MonkeyPatch) -> Iterator:
    monkeypatch.setenv("AUDITOR_DATABASE_URL", seeded)
    get_settings.cache_clear()
    runner = CliRunner()
    yield lambda *args: runner.invoke(app, list(args))
    get_settings.cache_clear()
