"""Mistakes a user makes at the command line end in one line naming the mistake and a
non-zero exit, not a driver traceback (found by QA on a fresh clone)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork


def _auditor(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    # A real process: the console entry point (auditor.cli.main) is what turns errors into
    # messages, and CliRunner does not go through it.
    code = "import sys; from auditor.cli import main; sys.argv[0] = 'auditor'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"AUDITOR_DATABASE_URL": url, "PATH": "/usr/bin:/bin"},
    )


def test_unknown_revision_is_a_usage_error_naming_the_known_ones(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rev.db'}"
    for command in ("upgrade", "downgrade"):
        result = _auditor(url, "db", command, "zzz")
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert "revision 'zzz'" in result.stderr and "known revisions: base, 0001" in result.stderr


@pytest.mark.parametrize(
    ("url", "expected", "code"),
    [
        ("sqlite:///{tmp}/never-upgraded.db", "run `auditor db upgrade`", 2),
        ("sqlite:///{tmp}/no/such/dir/x.db", "no such file; nothing was created", 2),
        ("not a url", "AUDITOR_DATABASE_URL is not a database URL", 1),
    ],
)
def test_database_problems_are_one_line(tmp_path: Path, url: str, expected: str, code: int) -> None:
    result = _auditor(url.format(tmp=tmp_path), "project", "list")
    assert result.returncode == code
    assert "Traceback" not in result.stderr
    assert expected.lower() in result.stderr.lower()


def test_bugs_still_raise_with_their_traceback(tmp_path: Path) -> None:
    # Only database errors a user can fix are translated; others keep the traceback.
    from auditor.storage.db import describe_database_error

    assert describe_database_error(KeyError("x")) is None


@pytest.fixture
def history_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UnitOfWork:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    migrate.upgrade(url)
    monkeypatch.setenv("AUDITOR_DATABASE_URL", url)
    get_settings.cache_clear()
    uow = UnitOfWork(make_engine(url))
    create_project(uow, "h", ["a", "b"])
    t0 = datetime.now(UTC) - timedelta(hours=1)
    rows = [
        {"item": f"i{i}", "rater": r, "label": "ab"[(i * (1 + (r == "y"))) % 3 % 2],
         "labeled_at": t0 + timedelta(seconds=i)}
        for i in range(20)
        for r in ("x", "y")
    ]  # fmt: skip
    ingest_labels(uow, "h", rows)
    recompute_project(uow, find_project_id(uow, "h"))
    yield uow
    get_settings.cache_clear()


def test_history_pair_in_either_order_and_project_metric_message(history_db) -> None:
    runner = CliRunner()
    forward = runner.invoke(app, ["history", "h", "--metric", "cohen_kappa",
                                  "--subject", "pair:x|y", "--scope", "cumulative"])  # fmt: skip
    backward = runner.invoke(app, ["history", "h", "--metric", "cohen_kappa",
                                   "--subject", "pair:y|x", "--scope", "cumulative"])  # fmt: skip
    assert forward.exit_code == 0 and backward.exit_code == 0, backward.output
    assert backward.stdout == forward.stdout and "cumulative" in forward.stdout

    unknown = runner.invoke(app, ["history", "h", "--metric", "bogus"])
    assert unknown.exit_code == 1
    assert "has no 'bogus' for the project; known project metrics" in unknown.stderr
    assert "project ''" not in unknown.stderr


def test_run_once_banner_hides_the_password(tmp_path: Path) -> None:
    from auditor.storage.db import display_url

    assert display_url("postgresql+psycopg://u:s3cret@db:5432/x") == (
        "postgresql+psycopg://u:***@db:5432/x"
    )
    url = f"sqlite:///{tmp_path / 'run.db'}"
    migrate.upgrade(url)
    result = _auditor(url, "run", "--once")
    assert result.returncode == 0, result.stderr
    assert "one scan of sqlite:///" in result.stderr and "Ctrl-C" not in result.stderr
    # issue 27: it says what the scan did
    assert "scan done: no project due for a recompute" in result.stdout, result.stdout


# issue 27: each message says what, where and how to fix it.


def test_a_bad_slug_and_a_single_category_say_how_to_fix_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    migrate.upgrade(url)
    slug = _auditor(url, "project", "create", "Bad Slug!", "--categories", "a,b")
    assert slug.returncode == 1
    assert "'Bad Slug!' is not a slug: use lowercase letters" in slug.stderr
    assert "'bad-slug'" in slug.stderr and "String should match pattern" not in slug.stderr
    one = _auditor(url, "project", "create", "p", "--categories", "a")
    assert one.returncode == 1
    assert "a project needs at least 2 categories, got 1 (a)" in one.stderr
    assert "List should have" not in one.stderr


def test_a_rater_metric_without_subject_says_whose_it_is(history_db) -> None:
    result = CliRunner().invoke(app, ["history", "h", "--metric", "self_agreement"])
    assert result.exit_code == 1
    assert "'self_agreement' is a rater metric" in result.stderr
    assert "--subject rater:ID (e.g. rater:x, rater:y)" in result.stderr


def test_binary_and_header_only_files_are_refused_and_not_recorded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    migrate.upgrade(url)
    assert _auditor(url, "project", "create", "p", "--categories", "a,b").returncode == 0
    png = tmp_path / "labels.csv"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20)
    binary = _auditor(url, "import", "p", str(png))
    assert binary.returncode == 1
    assert "labels.csv is not a text file (a PNG image)" in binary.stderr
    assert "\\udc89" not in binary.stderr and len(binary.stderr) < 300
    header = tmp_path / "header.csv"
    header.write_text("item,rater,label\n", encoding="utf-8")
    empty = _auditor(url, "import", "p", str(header))
    assert empty.returncode == 1
    assert "header.csv has a header line but no rows" in empty.stderr
    listed = _auditor(url, "imports", "list", "p")
    assert "header.csv" not in listed.stdout  # not recorded as an import
    one = tmp_path / "one.csv"
    one.write_text("item,rater,label\ni1,r1,a\n", encoding="utf-8")
    single = _auditor(url, "import", "p", str(one))
    assert "one.csv: 1 row, 1 inserted, 0 duplicates, 0 rejected" in single.stdout, single
