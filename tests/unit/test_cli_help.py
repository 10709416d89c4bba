"""``auditor --help`` says where the database is (issue 27: no help page named it)."""

from __future__ import annotations

from typer.testing import CliRunner

from auditor.cli import app


def test_root_help_names_the_database_setting() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "AUDITOR_DATABASE_URL" in result.output
    assert "sqlite:///auditor.db" in result.output
