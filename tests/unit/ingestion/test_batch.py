"""Pure batch validation: each rule, the row numbers it reports, and properties."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.domain import RaterKind
from auditor.ingestion.batch import RawBatch, to_micros, validate_batch
from auditor.ingestion.errors import MAX_REPORTED_ERRORS, IngestRejected

CATEGORIES = ["yes", "no"]

# Accepted times (auditor.domain): [1970-01-01, 2100-01-01) UTC.
IN_RANGE = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2099, 12, 31, 23, 59, 59),
    timezones=st.just(UTC),
)  # fmt: skip


def _rejected(records: list[dict[str, object]]) -> list[tuple[int, str | None, str]]:
    with pytest.raises(IngestRejected) as caught:
        validate_batch(RawBatch.from_records(records), CATEGORIES)
    return [(e.row, e.field, e.message) for e in caught.value.errors]


def test_normalises_ids_times_and_kinds() -> None:
    batch = validate_batch(
        RawBatch.from_records(
            [
                {"item": " a ", "rater": 12, "label": "yes",
                 "labeled_at": "2024-05-01T12:00:00+02:00",
                 "rater_kind": "MODEL", "session": "", "key": 5},
                {"item": "b", "rater": "r", "label": "no", "labeled_at": "2024-05-01 10:00"},
            ]
        ),
        CATEGORIES,
    )  # fmt: skip
    assert batch.item == ["a", "b"]
    assert batch.rater == ["12", "r"]
    assert batch.session == [None, None]
    assert batch.key == ["5", None]
    assert batch.rater_kind == [RaterKind.MODEL, None]
    ten_utc = to_micros(datetime(2024, 5, 1, 10, tzinfo=UTC))
    assert batch.labeled_at == [ten_utc, ten_utc]  # an offset, and no zone read as UTC


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ({"rater": "r", "label": "yes"}, "item", "is missing"),
        ({"item": "  ", "rater": "r", "label": "yes"}, "item", "is empty"),
        ({"item": True, "rater": "r", "label": "yes"}, "item", "must be text or an integer"),
        ({"item": 1.5, "rater": "r", "label": "yes"}, "item", "must be text or an integer"),
        ({"item": "a", "rater": "r", "label": "Yes"}, "label", "unknown category 'Yes'"),
        ({"item": "a", "rater": "r" * 201, "label": "yes"}, "rater", "201 characters long"),
        ({"item": "a\u0085b", "rater": "r", "label": "yes"}, "item", "U+0085"),
        ({"item": "a", "rater": "r", "label": "yes", "labeled_at": "05/01/2024"}, "labeled_at",
         "ISO 8601"),
        ({"item": "a", "rater": "r", "label": "yes", "labeled_at": 1714557600}, "labeled_at",
         "must be an ISO 8601 text"),
        ({"item": "a", "rater": "r", "label": "yes", "rater_kind": "robot"}, "rater_kind",
         "'human' or 'model'"),
        ({"item": "a", "rater": "r", "label": "yes", "session": "s\n"}, None, None),
        ({"item": "a", "rater": "r", "label": "yes", "key": "k\x1b"}, "key", "U+001B"),
        ({"item": "a", "rater": "r", "label": "yes", "extra": 1}, None, "unknown field(s) extra"),
    ],
)  # fmt: skip
def test_each_rule(record, field, message) -> None:
    if message is None:  # surrounding whitespace (a trailing newline) is trimmed, not an error
        validate_batch(RawBatch.from_records([record]), CATEGORIES)
        return
    errors = _rejected([{"item": "ok", "rater": "r", "label": "yes"}, record])
    assert [(row, name) for row, name, _ in errors] == [(2, field)]
    assert message in errors[0][2]


def test_error_list_is_capped_but_counted() -> None:
    records = [{"item": "", "rater": "r", "label": "yes"} for _ in range(MAX_REPORTED_ERRORS + 50)]
    with pytest.raises(IngestRejected) as caught:
        validate_batch(RawBatch.from_records(records), CATEGORIES)
    assert len(caught.value.errors) == MAX_REPORTED_ERRORS
    assert caught.value.total == MAX_REPORTED_ERRORS + 50
    assert "... and 50 more" in str(caught.value)


ids = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N")), min_size=1, max_size=8)
good_records = st.lists(
    st.fixed_dictionaries(
        {"item": ids, "rater": ids, "label": st.sampled_from(CATEGORIES)},
        optional={"session": ids, "labeled_at": IN_RANGE},
    ),
    min_size=1,
    max_size=40,
    # One label per natural identity: a second label for it is a conflict, not a good row.
    unique_by=lambda r: (r["item"], r["rater"], r.get("session"), r.get("labeled_at")),
)
BAD_VALUES = [("item", ""), ("rater", "x\x00"), ("label", "maybe"), ("labeled_at", "soon")]


@given(good_records, st.data())
def test_exactly_the_spoiled_rows_are_reported(records, data) -> None:
    """Spoil random rows of a valid batch: the errors name those rows and no others."""
    validate_batch(RawBatch.from_records(records), CATEGORIES)
    spoiled = data.draw(st.sets(st.integers(0, len(records) - 1), min_size=1))
    for position in spoiled:
        field, value = data.draw(st.sampled_from(BAD_VALUES))
        records[position] = {**records[position], field: value}
    with pytest.raises(IngestRejected) as caught:
        validate_batch(RawBatch.from_records(records), CATEGORIES)
    assert {error.row - 1 for error in caught.value.errors} == spoiled


@given(good_records)
def test_normalising_twice_changes_nothing(records) -> None:
    once = validate_batch(RawBatch.from_records(records), CATEGORIES)
    fields = ("item", "rater", "label", "session")
    again_records = [
        {name: getattr(once, name)[i] for name in fields if getattr(once, name) is not None}
        for i in range(len(once))
    ]
    twice = validate_batch(RawBatch.from_records(again_records), CATEGORIES)
    for name in fields:
        assert getattr(twice, name) == getattr(once, name)


def _times(values: list[str]) -> RawBatch:
    n = len(values)
    return RawBatch(
        rows=list(range(2, n + 2)), item=["i"] * n, rater=["r"] * n, label=["a"] * n,
        labeled_at=list(values),
    )  # fmt: skip


@pytest.mark.parametrize(
    "bad",
    ["2024-02-30T00:00:00Z", "2023-02-29T10:00:00Z", "2024-01-01T24:00:00Z",
     "2024-01-01T23:59:60Z", "2024-13-01T00:00:00Z"],
)  # fmt: skip
def test_whole_column_timestamps_agree_with_one_by_one(bad: str) -> None:
    """The vectorised path for plain UTC timestamps gives the same microseconds as
    datetime.fromisoformat, and a column with an impossible date still names its row."""
    good = ["2024-02-29T23:59:59Z", "1970-01-01T00:00:00Z", "2099-12-31T23:59:59Z"]
    valid = validate_batch(_times(good), ["a"])
    assert valid.labeled_at == [to_micros(datetime.fromisoformat(value)) for value in good]
    with pytest.raises(IngestRejected) as caught:
        validate_batch(_times([*good, bad]), ["a"])
    assert [(e.row, e.field) for e in caught.value.errors] == [(5, "labeled_at")]


@given(st.lists(IN_RANGE, min_size=1, max_size=20))
def test_plain_utc_column_matches_fromisoformat(moments: list[datetime]) -> None:
    texts = [m.replace(microsecond=0, tzinfo=None).isoformat() + "Z" for m in moments]
    valid = validate_batch(_times(texts), ["a"])
    assert valid.labeled_at == [to_micros(datetime.fromisoformat(t)) for t in texts]


@pytest.mark.parametrize(
    "bad",
    ["1969-12-31T23:59:59Z", "2100-01-01T00:00:00Z", "0001-01-01T00:00:00Z",
     "9999-12-31T23:59:59-05:00", "1970-01-01T00:30:00+01:00"],
)  # fmt: skip
def test_labeled_at_out_of_bounds_names_its_row(bad: str) -> None:
    """[1970-01-01, 2100-01-01) UTC, on both the whole-column and the one-by-one path."""
    good = ["1970-01-01T00:00:00Z", "2099-12-31T23:59:59Z"]
    assert validate_batch(_times(good), ["a"]).labeled_at is not None
    with pytest.raises(IngestRejected) as caught:
        validate_batch(_times([*good, bad]), ["a"])
    assert [(e.row, e.field) for e in caught.value.errors] == [(4, "labeled_at")]
    assert "[1970-01-01, 2100-01-01) UTC" in caught.value.errors[0].message
