"""Issue 26 item 7: timestamps are RFC 3339 (and the documented zone-less form, read as UTC,
with ``T`` or a space) and nothing else; more than 6 fractional digits are refused, not
truncated. Before, anything ``datetime.fromisoformat`` took was accepted (week dates, the
basic format, ``" Z"``, offsets with seconds) and a 7th digit was dropped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from auditor.domain import parse_timestamp
from auditor.ingestion.batch import RawBatch, validate_batch
from auditor.ingestion.errors import IngestRejected

ACCEPTED = {
    "2024-05-01T10:00:00Z": datetime(2024, 5, 1, 10, tzinfo=UTC),
    "2024-05-01t10:00:00z": datetime(2024, 5, 1, 10, tzinfo=UTC),
    "2024-05-01 10:00:00Z": datetime(2024, 5, 1, 10, tzinfo=UTC),
    "2024-05-01T10:00:00": datetime(2024, 5, 1, 10, tzinfo=UTC),  # zone-less: UTC
    "2024-05-01 10:00:00.5": datetime(2024, 5, 1, 10, 0, 0, 500_000, tzinfo=UTC),
    "2024-05-01 10:00": datetime(2024, 5, 1, 10, tzinfo=UTC),  # no seconds (spreadsheets)
    "2024-05-01": datetime(2024, 5, 1, tzinfo=UTC),  # RFC 3339 full-date: midnight UTC
    "2024-05-01T10:00:00.123456+02:00": datetime(
        2024, 5, 1, 10, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2))
    ),
    "2024-05-01T10:00:00-05:30": datetime(
        2024, 5, 1, 10, tzinfo=timezone(-timedelta(hours=5, minutes=30))
    ),
}
REFUSED = {
    "2024-W18-3T10:00:00Z": "not an RFC 3339",  # week date
    "2024-122T10:00:00Z": "not an RFC 3339",  # ordinal date
    "20240501T100000Z": "not an RFC 3339",  # basic format
    "2024-05-01T10:00:00 Z": "not an RFC 3339",  # a space before the zone
    "2024-05-01T10:00:00+02:00:30": "not an RFC 3339",  # an offset with seconds
    "2024-05-01T10:00:00+0200": "not an RFC 3339",
    "2024-05-01T": "not an RFC 3339",
    "2024-05-01T10:00:00.1234567Z": "7 fractional digits",
    "2024-02-30T10:00:00Z": "not a valid ISO 8601 date",
    "2024-05-01T24:00:00Z": "not a valid ISO 8601 date",
    "2024-05-01T10:00:00+24:00": "not a valid offset",
}


@pytest.mark.parametrize(("text", "moment"), ACCEPTED.items())
def test_rfc3339_and_the_zone_less_form_are_read(text: str, moment: datetime) -> None:
    assert parse_timestamp(text) == moment
    assert parse_timestamp(text).utcoffset() is not None


@pytest.mark.parametrize(("text", "said"), REFUSED.items())
def test_other_forms_are_refused(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        parse_timestamp(text)


def test_a_label_file_names_the_row_of_a_refused_form() -> None:
    rows = [
        {"item": "i", "rater": "r", "label": "a", "labeled_at": "2024-05-01T10:00:00.1234567Z"},
        {"item": "i", "rater": "s", "label": "a", "labeled_at": "2024-W18-3T10:00:00Z"},
        {"item": "i", "rater": "t", "label": "a", "labeled_at": "2024-05-01 10:00:00"},
    ]
    with pytest.raises(IngestRejected) as rejected:
        validate_batch(RawBatch.from_records(rows), ["a"])
    errors = {(e.row, e.field): e.message for e in rejected.value.errors}
    assert set(errors) == {(1, "labeled_at"), (2, "labeled_at")}
    assert "7 fractional digits" in errors[(1, "labeled_at")]
