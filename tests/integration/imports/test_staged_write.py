"""The staged file import (``auditor.storage.staging``) on both databases: values that CSV
must quote survive the staging copy, rows repeating an earlier batch are judged across
batches, and on SQLite the per-row reference trigger, dropped for the one bulk insert, is in
place again after every import, written or refused, and still refuses a bad label."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from auditor.ingestion.readers import LabelFileReader
from auditor.services.ingest.labels import import_batches
from auditor.services.projects.projects import create_project
from auditor.storage.unit_of_work import UnitOfWork


def _import(engine: Engine, path: Path, batch_size: int = 2):
    return import_batches(UnitOfWork(engine), "p", LabelFileReader(path, batch_size))


def _trigger(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return connection.execute(
            text("SELECT sql FROM sqlite_master WHERE name = 'labels_check_insert'")
        ).scalar()


def test_quoted_values_and_repeats_across_batches(engine: Engine, uow, tmp_path: Path) -> None:
    create_project(uow, "p", ["a", "b"])
    path = tmp_path / "labels.csv"
    path.write_text(
        "item,rater,label,labeled_at,session\n"
        '"x, ""quoted""",r1,a,2024-01-01T00:00:00Z,"s;1"\n'
        "plain,r1,a,2024-01-01T00:00:01Z,\n"
        '"x, ""quoted""",r1,a,2024-01-01T00:00:00Z,"s;1"\n'  # a repeat, two batches later
    )
    result = _import(engine, path)
    assert (result.inserted, result.duplicates, result.errors) == (2, 1, [])
    with engine.connect() as connection:
        items = connection.execute(text("SELECT external_id FROM items")).scalars()
        assert sorted(items) == ["plain", 'x, "quoted"']
        sessions = connection.execute(text("SELECT external_id FROM sessions")).scalars()
        assert list(sessions) == ["s;1"]
    path.write_text(
        "item,rater,label,labeled_at\n"
        "plain,r1,b,2024-01-01T00:00:01Z\n"  # conflicts with the stored label
    )
    refused = _import(engine, path)
    assert [str(e) for e in refused.errors] == [
        "row 2, field 'label': conflicts with a stored label of the same item, rater, "
        "session and labeled_at"
    ]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_reference_trigger_is_back_after_every_import(
    engine: Engine, uow, tmp_path: Path
) -> None:
    create_project(uow, "p", ["a", "b"])
    before = _trigger(engine)
    assert before is not None
    path = tmp_path / "labels.csv"
    path.write_text("item,rater,label,labeled_at\ni,r,a,2024-01-01T00:00:00Z\n")
    assert _import(engine, path).inserted == 1
    assert _trigger(engine) == before
    path.write_text("item,rater,label,labeled_at\ni,r,b,2024-01-01T00:00:00Z\n")
    assert _import(engine, path).rejected  # refused in the write transaction
    assert _trigger(engine) == before
    with engine.begin() as connection, pytest.raises(IntegrityError, match="FOREIGN KEY"):
        connection.execute(
            text(
                "INSERT INTO labels (project_id, item_id, rater_id, category_id, labeled_at, "
                "received_at) VALUES (1, 999, 1, 1, 1, 1)"
            )
        )


def test_a_repeat_across_jsonl_batches_with_and_without_a_session_field(
    engine: Engine, uow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks of two lines: the first batch has a session field (given by another record),
    # the second has none; the repeated row has no session in either.
    from auditor.ingestion import arrow_json

    monkeypatch.setattr(arrow_json, "BLOCK_SIZE", 200)
    create_project(uow, "p", ["a", "b"])
    row = '{"item": "i1", "rater": "r1", "label": "a", "labeled_at": "2024-01-01T00:00:00Z"}'
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "\n".join(
            [
                row,
                '{"item": "i2", "rater": "r1", "label": "a", "session": "s1"}',
                '{"item": "i3", "rater": "r1", "label": "b", "labeled_at": "2024-01-02T00:00:00Z"}',
                row,
            ]
        )
        + "\n"
    )
    result = _import(engine, path)
    assert (result.inserted, result.duplicates, result.errors) == (3, 1, [])
