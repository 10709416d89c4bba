"""The commands of this part, run in-process against both backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.storage import migrate


@pytest.fixture
def cli(monkeypatch) -> Iterator[Callable[..., Any]]:
    runner = CliRunner()

    def run(url: str, *args: str):
        monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
        get_settings.cache_clear()
        return runner.invoke(app, list(args))

    yield run
    get_settings.cache_clear()


def test_db_upgrade_check_downgrade(cli, scratch_database_url) -> None:
    assert cli(scratch_database_url, "db", "upgrade", "0010").exit_code == 0
    result = cli(scratch_database_url, "db", "check")
    # the words of SchemaOutOfDate, as the server, the workers and every command say it
    assert (result.exit_code, result.stderr) == (
        1,
        f"error: the database is at revision 0010, this code needs {migrate.head()}: "
        "run `auditor db upgrade`\n",
    )
    assert cli(scratch_database_url, "db", "upgrade").exit_code == 0
    result = cli(scratch_database_url, "db", "check")
    assert result.exit_code == 0, result.stderr
    assert "no drift" in result.stdout
    assert cli(scratch_database_url, "db", "downgrade", "base", "--yes").exit_code == 0


def test_project_commands(cli, database_url) -> None:
    result = cli(database_url, "project", "create", "chest", "--categories", "normal,benign",
                 "--collapse", "latest", "--windows", "7,30",
                 "--rater-model", "max_entropy")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "collapse   latest" in result.stdout
    assert "rater model max_entropy" in result.stdout
    assert cli(database_url, "project", "create", "chest", "-c", "a,b").exit_code == 1
    assert cli(database_url, "project", "create", "Bad!", "-c", "a,b").exit_code == 1
    assert cli(database_url, "project", "list").stdout.startswith("chest\tnormal,benign")
    assert cli(database_url, "project", "add-categories", "chest", "other").exit_code == 0
    shown = cli(database_url, "project", "show", "chest")
    assert "0:normal, 1:benign, 2:other" in shown.stdout
    assert "windows    7d, 30d" in shown.stdout
    assert "rater model max_entropy" in shown.stdout
    for windows, said in (("7,30,7", "repeats 7d"), ("", "at least one window")):  # issue 26
        refused = cli(database_url, "project", "create", "w", "-c", "a,b", "--windows", windows)
        assert refused.exit_code == 2 and said in refused.stderr, refused.stderr
    default = cli(database_url, "project", "create", "plain", "-c", "a,b")
    assert "rater model moments" in default.stdout
    assert "scale      nominal" in default.stdout
    graded = cli(database_url, "project", "create", "birads", "-c", "1,2,3,4,5",
                 "--scale", "ordinal", "--weights", "linear")  # fmt: skip
    assert graded.exit_code == 0, graded.stderr
    assert "scale      ordinal, linear weights" in graded.stdout
    assert cli(database_url, "project", "create", "x", "-c", "a,b", "--scale", "odd").exit_code == 2
    assert cli(database_url, "project", "show", "nope").exit_code == 1


def test_import_good_then_bad_file(cli, database_url, tmp_path: Path, count_rows) -> None:
    assert cli(database_url, "project", "create", "p", "-c", "yes,no").exit_code == 0
    good = tmp_path / "good.csv"
    good.write_text(
        "item,rater,label,key\n" + "".join(f"i{n},r{n % 3},yes,k{n}\n" for n in range(25))
    )
    result = cli(database_url, "import", "p", str(good), "--batch-size", "10")
    assert result.exit_code == 0, result.stderr
    assert "25 rows, 25 inserted, 0 duplicates, 0 rejected" in result.stdout
    before = count_rows()

    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,label\n" + "a,b,yes\n" * 12 + "a,,maybe\n" + "a,b,yes\n")
    result = cli(database_url, "import", "p", str(bad), "--batch-size", "5")
    assert result.exit_code == 1
    assert "row 14, field 'label': unknown category 'maybe'" in result.stderr
    assert "row 14, field 'rater': is empty" in result.stderr
    assert "14 rows, 1 rejected (2 errors); nothing was imported" in result.stderr
    assert count_rows() == before

    missing = tmp_path / "missing.csv"
    missing.write_text("item,rater\na,b\n")
    result = cli(database_url, "import", "p", str(missing))
    assert result.exit_code == 1 and "missing column(s) label" in result.stderr
    assert cli(database_url, "import", "nope", str(good)).exit_code == 1
    assert count_rows() == before
