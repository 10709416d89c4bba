"""One exceptions module: every error a person sees is an ``auditor.errors`` error, so the API
(status, code, details) and the CLI (message, exit code) each map them in one place."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from auditor.api.errors import status_of
from auditor.cli._common import errors_shown
from auditor.errors import AuditorError, Conflict, Failure, Invalid, NotFound, WriteConflict
from auditor.ingestion.errors import FileFormatError, IngestRejected, RowError
from auditor.ingestion.label_studio import LabelStudioFormatError
from auditor.ingestion.label_studio_events import EventError
from auditor.notifiers.targets import TargetRefused, Unresolvable
from auditor.services.ingest.idempotent_posts import IdempotencyMismatch
from auditor.services.projects.settings import InvalidSetting
from auditor.services.recompute.recompute import RecomputeFailed, RecomputeInterrupted


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (NotFound("no project 'x'"), 404, "not_found"),
        (Conflict("project 'x' already exists"), 409, "conflict"),
        (Invalid("bad"), 422, "invalid"),
        (InvalidSetting("interval_level", "too high"), 422, "invalid"),
        (IdempotencyMismatch("another body"), 422, "idempotency_mismatch"),
        (IngestRejected([RowError(2, "label", "unknown")]), 422, "labels_rejected"),
        (FileFormatError("no header"), 422, "file_format"),
        (LabelStudioFormatError("not a list"), 422, "label_studio_format"),
        (EventError("no action"), 422, "label_studio_event"),
        (TargetRefused("private address"), 422, "target_refused"),
        (Unresolvable("cannot resolve"), 422, "target_refused"),
    ],
)
def test_each_kind_has_its_status_and_code(error: AuditorError, status: int, code: str) -> None:
    assert status_of(error) == status
    assert error.code == code


def test_failures_are_not_the_inputs_fault() -> None:
    # The API logs them and answers 500; the CLI shows the message to its operator.
    for error in (WriteConflict("deadlock"), RecomputeInterrupted("gone"), RecomputeFailed("x")):
        assert isinstance(error, Failure) and isinstance(error, RuntimeError)


def test_details_name_the_field_or_the_rows() -> None:
    assert InvalidSetting("interval_level", "too high").details() == [
        {"field": "interval_level", "message": "too high"}
    ]
    assert Invalid("bad").details() == []
    rejected = IngestRejected([RowError(3, None, "empty row"), RowError(2, "label", "unknown")])
    assert rejected.message == "2 bad row value(s); nothing was written"
    assert rejected.details() == [
        {"row": 2, "field": "label", "message": "unknown"},
        {"row": 3, "field": None, "message": "empty row"},
    ]
    lines = ["  row 2, field 'label': unknown", "  row 3: empty row"]
    assert str(rejected).splitlines()[1:] == lines


def test_the_cli_shows_any_of_them_as_one_line_and_exit_1() -> None:
    app = typer.Typer()

    @app.command()
    def broken() -> None:
        with errors_shown():
            raise FileFormatError("data.csv, line 1: missing column(s) label")

    result = CliRunner().invoke(app, [])
    assert result.exit_code == 1
    assert result.output.strip() == "error: data.csv, line 1: missing column(s) label"


def test_the_api_maps_database_errors_by_type_alone() -> None:
    from auditor.api.errors import unavailable
    from auditor.errors import DatabaseBusy, DatabaseUnavailable

    busy = unavailable(DatabaseBusy("lock timeout"))
    assert busy is not None and (busy.code, busy.retry_after) == ("database_busy", 5)
    down = unavailable(DatabaseUnavailable("connection refused"))
    assert down is not None and down.code == "unavailable"
    try:  # a service that wrapped it: found along the chain, still by type
        try:
            raise DatabaseUnavailable("gone")
        except DatabaseUnavailable as error:
            raise RuntimeError("recompute") from error
    except RuntimeError as wrapped:
        assert unavailable(wrapped) is not None
    # words are not a type: a message that reads like one is an internal error
    assert unavailable(RuntimeError("database is locked; connection refused")) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("interval_level", 0.2),
        ("bootstrap_resamples", 3),
        ("windows_days", (0,)),
        ("recompute_interval_seconds", 0),
    ],
)
def test_a_bad_setting_names_its_field_by_attribute(field: str, value: object) -> None:
    # The services read the field from the error, not from the first word of its message.
    from auditor.domain import ProjectSettings, SettingError

    with pytest.raises(SettingError) as caught:
        ProjectSettings(**{field: value})  # type: ignore[arg-type]
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)  # callers that want the message only
