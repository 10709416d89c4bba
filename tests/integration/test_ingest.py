"""The ingest service on both backends: all or nothing, first sight, duplicates, conflicts."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from auditor.errors import NotFound
from auditor.ingestion.errors import IngestRejected
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage.unit_of_work import UnitOfWork

CATEGORIES = ["cat", "dog", "bird"]


@pytest.fixture
def project(uow: UnitOfWork) -> str:
    create_project(uow, "pets", CATEGORIES)
    return "pets"


def _labels(engine: Engine) -> list[tuple]:
    query = (
        "SELECT i.external_id, r.external_id, c.name, s.external_id, l.labeled_at, l.client_key "
        "FROM labels l JOIN items i ON i.id = l.item_id JOIN raters r ON r.id = l.rater_id "
        "JOIN categories c ON c.id = l.category_id LEFT JOIN sessions s ON s.id = l.session_id "
        "ORDER BY l.id"
    )
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(query))]


def _micros(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def test_first_sight_creates_items_raters_sessions(uow, engine, project, count_rows) -> None:
    rows = [
        {"item": "a", "rater": "ann", "label": "cat", "session": "s1",
         "labeled_at": "2024-05-01T10:00:00Z"},
        {"item": "a", "rater": "bot", "label": "dog", "rater_kind": "model"},
        {"item": 7, "rater": "ann", "label": "bird", "session": "s1",
         "labeled_at": "2024-05-01T12:30:00+02:00"},
    ]  # fmt: skip
    before = datetime.now(UTC)
    result = ingest_labels(uow, project, rows)
    assert (result.inserted, result.duplicates) == (3, 0)
    assert result.max_label_id is not None and result.max_label_id >= 3
    counts = count_rows()
    assert (counts["items"], counts["raters"], counts["sessions"], counts["labels"]) == (2, 2, 1, 3)
    stored = _labels(engine)
    assert stored[0] == (
        "a",
        "ann",
        "cat",
        "s1",
        _micros(datetime(2024, 5, 1, 10, tzinfo=UTC)),
        None,
    )
    # +02:00 is stored as UTC; a label without labeled_at gets the time it was received.
    assert stored[2][4] == _micros(datetime(2024, 5, 1, 10, 30, tzinfo=UTC))
    assert stored[1][4] >= _micros(before)
    with engine.connect() as connection:
        kinds = dict(connection.execute(text("SELECT external_id, kind FROM raters")).all())
        span = connection.execute(text("SELECT started_at, ended_at FROM sessions")).one()
    assert kinds == {"ann": "human", "bot": "model"}
    assert tuple(span) == (stored[0][4], stored[2][4])


def test_session_span_widens_and_label_ids_grow(uow, engine, project) -> None:
    first = ingest_labels(uow, project, [
        {"item": "a", "rater": "ann", "label": "cat", "session": "s", "labeled_at": "2024-05-02"},
    ])  # fmt: skip
    second = ingest_labels(uow, project, [
        {"item": "b", "rater": "ann", "label": "cat", "session": "s", "labeled_at": "2024-05-01"},
        {"item": "c", "rater": "ann", "label": "cat", "session": "s", "labeled_at": "2024-05-03"},
    ])  # fmt: skip
    assert second.max_label_id > first.max_label_id
    with engine.connect() as connection:
        span = connection.execute(text("SELECT started_at, ended_at FROM sessions")).one()
    assert tuple(span) == (
        _micros(datetime(2024, 5, 1, tzinfo=UTC)),
        _micros(datetime(2024, 5, 3, tzinfo=UTC)),
    )


def test_batch_with_one_bad_row_writes_nothing(uow, project, count_rows) -> None:
    before = count_rows()
    rows = [
        {"item": f"i{n}", "rater": f"r{n % 3}", "label": "cat", "session": "s"} for n in range(50)
    ]
    rows[37]["label"] = "cow"
    with pytest.raises(IngestRejected) as caught:
        ingest_labels(uow, project, rows)
    assert [(e.row, e.field) for e in caught.value.errors] == [(38, "label")]
    assert "unknown category 'cow'" in str(caught.value)
    assert count_rows() == before


def test_every_bad_row_and_field_is_named(uow, project, count_rows) -> None:
    before = count_rows()
    rows = [
        {"item": "ok", "rater": "ann", "label": "cat"},
        {"item": "", "rater": "ann", "label": "cat"},
        {"item": "a", "rater": "ann\x07", "label": "cat", "labeled_at": "2024-02-30"},
        {"item": "a" * 201, "rater": "ann", "label": "cat", "rater_kind": "robot"},
        {"item": "a", "rater": "ann", "label": "cat", "key": "k", "colour": "red"},
    ]
    with pytest.raises(IngestRejected) as caught:
        ingest_labels(uow, project, rows)
    assert [(e.row, e.field) for e in caught.value.errors] == [
        (2, "item"), (3, "labeled_at"), (3, "rater"), (4, "item"), (4, "rater_kind"), (5, None),
    ]  # fmt: skip
    assert count_rows() == before


def test_rater_kind_cannot_change(uow, project, count_rows) -> None:
    ingest_labels(
        uow, project, [{"item": "a", "rater": "bot", "label": "cat", "rater_kind": "model"}]
    )
    before = count_rows()
    rows = [
        {"item": "new", "rater": "bot", "label": "cat"},  # no kind stated: fine
        {"item": "b", "rater": "bot", "label": "dog", "rater_kind": "human"},
    ]
    with pytest.raises(IngestRejected) as caught:
        ingest_labels(uow, project, rows)
    assert [(e.row, e.field) for e in caught.value.errors] == [(2, "rater_kind")]
    assert "stored as 'model'" in str(caught.value)
    assert count_rows() == before  # the new item of row 1 was not kept either


def test_kind_contradiction_inside_a_batch(uow, project) -> None:
    rows = [
        {"item": "a", "rater": "x", "label": "cat", "rater_kind": "human"},
        {"item": "b", "rater": "x", "label": "cat", "rater_kind": "model"},
    ]
    with pytest.raises(IngestRejected) as caught:
        ingest_labels(uow, project, rows)
    assert [(e.row, e.field) for e in caught.value.errors] == [(2, "rater_kind")]


def test_client_key_duplicates_and_conflicts(uow, engine, project, count_rows) -> None:
    label = {"item": "a", "rater": "ann", "label": "cat", "key": "k1", "labeled_at": "2024-05-01"}
    assert ingest_labels(uow, project, [label]).inserted == 1
    # Re-sent, alone or with new labels, with or without its labeled_at: a counted no-op.
    again = ingest_labels(uow, project, [label, {**label, "key": "k2"}])
    assert (again.inserted, again.duplicates) == (1, 1)
    without_time = {k: v for k, v in label.items() if k != "labeled_at"}
    assert (ingest_labels(uow, project, [without_time]).duplicates) == 1
    before = count_rows()
    for changed in (
        {"label": "dog"},
        {"item": "b"},
        {"labeled_at": "2024-05-02"},
        {"session": "s"},
    ):
        with pytest.raises(IngestRejected) as caught:
            ingest_labels(uow, project, [{"item": "z", "rater": "ann", "label": "cat"},
                                         {**label, **changed}])  # fmt: skip
        assert [(e.row, e.field) for e in caught.value.errors] == [(2, "key")], changed
        assert "already stored for a different label" in str(caught.value)
    assert count_rows() == before
    assert [row[5] for row in _labels(engine)] == ["k1", "k2"]


def test_client_key_repeated_inside_a_batch(uow, project) -> None:
    label = {"item": "a", "rater": "ann", "label": "cat", "key": "k"}
    result = ingest_labels(uow, project, [label, dict(label), {**label, "key": None}])
    assert (result.inserted, result.duplicates) == (2, 1)
    with pytest.raises(IngestRejected) as caught:
        ingest_labels(uow, project, [{**label, "key": "j"}, {**label, "key": "j", "label": "dog"}])
    assert [(e.row, e.field) for e in caught.value.errors] == [(2, "key")]
    assert "used in row 1" in str(caught.value)


def test_same_key_in_two_projects_is_two_labels(uow, project) -> None:
    create_project(uow, "other", CATEGORIES)
    label = {"item": "a", "rater": "ann", "label": "cat", "key": "k"}
    assert ingest_labels(uow, project, [label]).inserted == 1
    assert ingest_labels(uow, "other", [label]).inserted == 1


def test_unknown_project(uow) -> None:
    with pytest.raises(NotFound):
        ingest_labels(uow, "nope", [{"item": "a", "rater": "b", "label": "c"}])


def test_timestamps_round_trip_as_aware_utc(uow, engine, project) -> None:
    from auditor.storage.models import Label

    moment = datetime(2024, 3, 31, 1, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-5)))
    ingest_labels(uow, project, [{"item": "a", "rater": "r", "label": "cat", "labeled_at": moment}])
    with uow:
        label = uow.session_for_tests.query(Label).one()
        assert label.labeled_at == moment
        assert label.labeled_at.utcoffset() == timedelta(0)


def test_concurrent_ingests_into_one_project(engine, project, count_rows) -> None:
    """Four writers at once; writers 0 and 2 (1 and 3) send the same labels with the same
    client keys, and all share items, raters and sessions: each label lands exactly once."""
    errors: list[BaseException] = []
    duplicates: list[int] = []
    barrier = threading.Barrier(4)

    def writer(number: int) -> None:
        offset = number % 2
        rows = [
            {"item": f"i{n}", "rater": f"r{(n + offset) % 5}", "label": CATEGORIES[n % 3],
             "session": "s", "key": f"k{n}-{offset}"}
            for n in range(200)
        ]  # fmt: skip
        try:
            barrier.wait()
            for start in range(0, 200, 50):
                result = ingest_labels(UnitOfWork(engine), project, rows[start : start + 50])
                duplicates.append(result.duplicates)
        except BaseException as error:  # report in the main thread
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    counts = count_rows()
    assert (counts["items"], counts["raters"], counts["labels"]) == (200, 5, 400)
    assert sum(duplicates) == 400


def test_count_rows_sees_writes(uow, project, count_rows) -> None:
    """The 'nothing written' checks above can fail: a write shows in the counts."""
    before = count_rows()
    ingest_labels(uow, project, [{"item": "a", "rater": "b", "label": "cat"}])
    after = count_rows()
    assert after["labels"] == before["labels"] + 1


def test_text_with_copy_escapes_round_trips(uow, engine, project) -> None:
    """Keys and ids with backslashes and COPY's escape sequences are stored as sent (the
    PostgreSQL path writes COPY text by hand), and a resent key is still a duplicate."""
    rows = [
        {"item": "a\\N", "rater": "ann\\t", "label": "cat", "key": "k\\N"},
        {"item": "é\\\\b", "rater": "ann\\t", "label": "dog", "key": "\\"},
        {"item": "c", "rater": "bob", "label": "bird", "session": "s\\n", "key": "ключ"},
    ]
    assert ingest_labels(uow, project, rows).inserted == 3
    stored = [(row[0], row[1], row[3], row[5]) for row in _labels(engine)]
    assert stored == [
        ("a\\N", "ann\\t", None, "k\\N"),
        ("é\\\\b", "ann\\t", None, "\\"),
        ("c", "bob", "s\\n", "ключ"),
    ]
    again = ingest_labels(uow, project, rows)
    assert (again.inserted, again.duplicates) == (0, 3)
