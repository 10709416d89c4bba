"""Label Studio webhook events -> operations (pure): shapes of the reference, versions, the
task object or id, and malformed events named."""

from __future__ import annotations

import pytest

from auditor.ingestion.label_studio_events import Delete, EventError, Upsert, operations


def _annotation(**fields: object) -> dict:
    base = {
        "id": 17, "task": 19, "completed_by": 1, "was_cancelled": False,
        "created_at": "2021-08-17T13:52:48.536303Z", "updated_at": "2021-08-17T13:52:48.536370Z",
        "result": [{"type": "choices", "from_name": "pet", "value": {"choices": ["cat"]}}],
    }  # fmt: skip
    return {**base, **fields}


def test_created_maps_like_the_import_and_versions_by_updated_at() -> None:
    (op,) = operations({"action": "ANNOTATION_CREATED", "annotation": _annotation()})
    assert isinstance(op, Upsert) and op.annotation_id == "17"
    assert op.mapped.record == {
        "item": 19, "rater": 1, "label": "cat", "labeled_at": "2021-08-17T13:52:48.536303Z",
        "key": "label-studio:17",
    }  # fmt: skip
    later = _annotation(updated_at="2021-08-17T13:53:00Z")
    (newer,) = operations({"action": "ANNOTATION_UPDATED", "annotation": later})
    assert isinstance(newer, Upsert) and newer.version > op.version


def test_task_object_gives_the_item_field_and_bulk_shapes() -> None:
    payload = {
        "action": "ANNOTATIONS_CREATED",
        "annotations": [_annotation(id=1, task=5), _annotation(id=2, task=6)],
        "tasks": [{"id": 5, "data": {"image": "a.png"}}, {"id": 6, "data": {"image": "b.png"}}],
    }
    ops = operations(payload)
    assert [o.mapped.record["item"] for o in ops if isinstance(o, Upsert)] == [5, 6]
    deleted = operations({"action": "ANNOTATIONS_DELETED", "annotations": [{"id": 1}, {"id": 2}]})
    assert deleted == [Delete("1"), Delete("2")]
    assert operations({"action": "PROJECT_UPDATED"}) is None
    assert operations({"action": "ANNOTATION_CREATED"}) == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ([], "JSON object with an 'action'"),
        (
            {"action": "ANNOTATION_CREATED", "annotation": {}},
            "annotation 1: an object with an 'id'",
        ),
        ({"action": "ANNOTATION_DELETED", "annotation": {"id": True}}, "integer or a string"),
        ({"action": "ANNOTATION_DELETED", "annotation": {"id": "x" * 181}}, "longer than 180"),
        ({"action": "ANNOTATION_CREATED", "annotation": _annotation(updated_at="soon")}, "soon"),
        (
            {
                "action": "ANNOTATION_CREATED",
                "annotation": _annotation(
                    result=[
                        {"type": "choices", "from_name": "a", "value": {"choices": ["x"]}},
                        {"type": "choices", "from_name": "b", "value": {"choices": ["y"]}},
                    ]
                ),
            },
            "several choices controls",
        ),
    ],
)
def test_malformed_events_are_named(payload: object, message: str) -> None:
    with pytest.raises(EventError, match=message):
        operations(payload)
