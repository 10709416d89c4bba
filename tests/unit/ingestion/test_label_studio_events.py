"""Label Studio webhook events -> operations (pure), on bodies captured from Label Studio
1.23.2 (tests/fixtures/label_studio_1_23_2): versions, the task object or list, bulk shapes,
deleted tasks, predictions, and malformed events named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.ingestion.label_studio import (
    ACCEPTED_PREDICTION,
    CANCELLED,
    UNSEEN_PREDICTION,
    LabelStudioOptions,
    PredictionSeen,
)
from auditor.ingestion.label_studio_events import (
    Delete,
    DeleteTasks,
    EventError,
    Upsert,
    operations,
    parent_predictions,
)

CAPTURED = Path(__file__).parents[2] / "fixtures" / "label_studio_1_23_2"


def captured(action: str) -> dict:
    return json.loads((CAPTURED / f"{action}.json").read_text())


def _annotation(**fields: object) -> dict:
    base = {
        "id": 17, "task": 19, "completed_by": 1, "was_cancelled": False,
        "created_at": "2021-08-17T13:52:48.536303Z", "updated_at": "2021-08-17T13:52:48.536370Z",
        "result": [{"type": "choices", "from_name": "pet", "value": {"choices": ["cat"]}}],
    }  # fmt: skip
    return {**base, **fields}


def test_a_captured_create_maps_like_the_import_with_its_task() -> None:
    (op,) = operations(captured("ANNOTATION_CREATED"))
    assert isinstance(op, Upsert) and (op.annotation_id, op.task_id) == ("1", "1")
    assert op.mapped.record == {
        "item": 1, "rater": 2, "label": "Normal", "labeled_at": "2026-11-27T09:48:51.344875Z",
        "key": "label-studio:1",
    }  # fmt: skip
    by_case = operations(captured("ANNOTATION_CREATED"), LabelStudioOptions("data.case"))
    assert by_case[0].mapped.record["item"] == "case-001"  # type: ignore[union-attr]
    (updated,) = operations(captured("ANNOTATION_UPDATED"))
    assert isinstance(updated, Upsert) and updated.mapped.record["label"] == "Normal"  # type: ignore[index]
    (skipped,) = operations(captured("ANNOTATION_CREATED_skipped"))
    assert isinstance(skipped, Upsert) and skipped.mapped.skipped == CANCELLED


def test_captured_bulk_create_from_predictions_carries_a_task_list() -> None:
    payload = captured("ANNOTATIONS_CREATED")
    assert isinstance(payload["annotation"], list) and isinstance(payload["task"], list)
    parents = parent_predictions(payload)
    assert parents == {str(a["parent_prediction"]) for a in payload["annotation"]}
    options = LabelStudioOptions(item_field="data.case")
    # not read yet: skipped with a reason (the sync or the API lookup brings the prediction)
    ops = operations(payload, options)
    assert ops and all(isinstance(o, Upsert) for o in ops)
    assert {o.mapped.skipped for o in ops if isinstance(o, Upsert)} == {UNSEEN_PREDICTION}
    # read: accepted unchanged, so the prediction is the model's label and this is no look
    same = {p: PredictionSeen("judge-v1", "Pneumonia") for p in parents}
    done = operations(payload, options, same)
    assert {o.mapped.skipped for o in done if isinstance(o, Upsert)} == {ACCEPTED_PREDICTION}
    # a prediction the annotation changed: the annotator's own label, on the task's item
    other = {p: PredictionSeen("judge-v1", "Normal") for p in parents}
    changed = [o for o in operations(payload, options, other) if isinstance(o, Upsert)]
    first = changed[0].mapped.record
    assert first is not None and first["rater"] == 1 and str(first["item"]).startswith("case-")
    # predictions ignored: the annotations are the clicking user's, as before
    ignored = operations(payload, LabelStudioOptions(predictions="ignore"))
    assert all(o.mapped.record is not None for o in ignored if isinstance(o, Upsert))


def test_captured_deletions_of_annotations_and_tasks() -> None:
    assert operations(captured("ANNOTATIONS_DELETED")) == [Delete("11")]
    assert operations(captured("TASKS_DELETED")) == [DeleteTasks(("44",))]
    assert operations(captured("TASKS_CREATED")) is None  # nothing to do: answered ignored


def test_versions_by_updated_at_and_the_older_shapes() -> None:
    (op,) = operations({"action": "ANNOTATION_CREATED", "annotation": _annotation()})
    later = _annotation(updated_at="2021-08-17T13:53:00Z")
    (newer,) = operations({"action": "ANNOTATION_UPDATED", "annotation": later})
    assert isinstance(op, Upsert) and isinstance(newer, Upsert) and newer.version > op.version
    payload = {
        "action": "ANNOTATIONS_CREATED",
        "annotations": [_annotation(id=1, task=5), _annotation(id=2, task=6)],
        "tasks": [{"id": 5, "data": {"image": "a.png"}}, {"id": 6, "data": {"image": "b.png"}}],
    }
    ops = operations(payload)
    assert [o.mapped.record["item"] for o in ops if isinstance(o, Upsert)] == [5, 6]
    deleted = operations({"action": "ANNOTATION_DELETED", "annotation": {"id": 2}})
    assert deleted == [Delete("2")]
    assert operations({"action": "PROJECT_UPDATED"}) is None
    assert operations({"action": "ANNOTATION_CREATED"}) == []


def test_several_controls_are_skipped_not_refused() -> None:
    two = _annotation(
        result=[
            {"type": "choices", "from_name": "a", "value": {"choices": ["x"]}},
            {"type": "choices", "from_name": "b", "value": {"choices": ["y"]}},
        ]
    )
    (op,) = operations({"action": "ANNOTATION_CREATED", "annotation": two})
    assert isinstance(op, Upsert) and op.mapped.record is None and op.mapped.skipped
    (picked,) = operations(
        {"action": "ANNOTATION_CREATED", "annotation": two}, LabelStudioOptions(from_name="b")
    )
    assert isinstance(picked, Upsert) and picked.mapped.record["label"] == "y"  # type: ignore[index]


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
        ({"action": "TASKS_DELETED", "tasks": [{"name": "x"}]}, "task 1: an object with an 'id'"),
    ],
)
def test_malformed_events_are_named(payload: object, message: str) -> None:
    with pytest.raises(EventError, match=message):
        operations(payload)
