"""Issue 11 item 4: every accepted time lies in [1970-01-01, 2100-01-01) UTC after its offset;
outside, the API answers 422 naming the field, the CLI exits 2 naming the option, a file
import names the row; `auditor db check` finds out-of-range times stored earlier."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
from sqlalchemy import text
from typer.testing import CliRunner

from auditor.cli import app as cli_app
from auditor.cli._common import parse_time
from auditor.config import get_settings
from auditor.domain import time_out_of_range
from auditor.ingestion.readers import LabelFileReader
from auditor.services.ingest.labels import import_batches, ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage.db import make_engine

OUTSIDE = [
    "0001-01-01T00:00:00+14:00",  # before datetime.min once in UTC
    "9999-12-31T23:59:59-14:00",  # after datetime.max once in UTC
    "1969-12-31T23:59:59Z",
    "1970-01-01T00:00:00+00:01",  # 23:59 the day before, in UTC
    "2100-01-01T00:00:00Z",
    "2099-12-31T23:00:00-01:00",  # 2100-01-01T00:00 UTC
]
INSIDE = ["1970-01-01T00:00:00Z", "2099-12-31T23:59:59.999999Z", "2099-12-31T23:00:00+14:00"]


@pytest.mark.parametrize("value", OUTSIDE)
def test_outside_the_range_is_named(value: str) -> None:
    problem = time_out_of_range(datetime.fromisoformat(value))
    assert problem is not None and "[1970-01-01, 2100-01-01) UTC" in problem


@pytest.mark.parametrize("value", INSIDE)
def test_inside_the_range_passes(value: str) -> None:
    assert time_out_of_range(datetime.fromisoformat(value)) is None


def test_cli_option_out_of_range_exits_2() -> None:
    with pytest.raises(typer.Exit) as stopped:
        parse_time("9999-12-31T23:59:59-14:00", "--until")
    assert stopped.value.exit_code == 2


def test_file_import_names_the_row(uow, tmp_path: Path) -> None:
    create_project(uow, "p", ["yes", "no"])
    lines = ["item,rater,label,labeled_at"] + [
        f"i{n},r{n % 2},yes,2024-05-01T10:00:00Z" for n in range(10)
    ]
    lines[7] = "i6,r0,yes,0001-01-01T00:00:00+14:00"
    (tmp_path / "f.csv").write_text("\n".join(lines) + "\n")
    result = import_batches(uow, "p", LabelFileReader(tmp_path / "f.csv", batch_size=4))
    assert result.rejected and result.inserted == 0
    assert [(e.row, e.field) for e in result.errors] == [(8, "labeled_at")]
    assert "out of range" in result.errors[0].message
    with pytest.raises(Exception, match="out of range"):
        ingest_labels(uow, "p", [{"item": "x", "rater": "r", "label": "yes",
                                  "labeled_at": datetime(2100, 1, 1, tzinfo=UTC)}])  # fmt: skip


def test_db_check_finds_times_stored_before_the_bound(uow, database_url, monkeypatch) -> None:
    create_project(uow, "p", ["yes", "no"])
    ingest_labels(uow, "p", [{"item": "x", "rater": "r", "label": "yes"}])
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        assert CliRunner().invoke(cli_app, ["db", "check"]).exit_code == 0
        engine = make_engine(database_url)
        with engine.begin() as connection:  # what an older version let in
            connection.execute(text("UPDATE labels SET labeled_at = -62135596800000000"))
        engine.dispose()
        result = CliRunner().invoke(cli_app, ["db", "check"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 1
    assert "labels.labeled_at: 1 rows" in result.stderr


def test_a_silence_past_2100_is_refused_by_the_service_and_the_cli(uow, database_url, monkeypatch):
    from auditor.errors import Invalid
    from auditor.services.alerts.silences import add_silence

    create_project(uow, "p", ["yes", "no"])
    with pytest.raises(Invalid, match=r"ends_at: .* out of range"):
        add_silence(uow, "p", ends_at=datetime(2100, 1, 1, tzinfo=UTC), subject="project",
                    reason="x")  # fmt: skip
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        for duration in ("99999d", "999999999d"):
            result = CliRunner().invoke(
                cli_app,
                ["alerts", "silence", "p", "--subject", "project", "--for", duration,
                 "--reason", "x"],
            )  # fmt: skip
            assert result.exit_code in (1, 2), result.output
            assert "2100" in result.stderr, result.stderr
    finally:
        get_settings.cache_clear()
