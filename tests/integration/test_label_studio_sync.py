"""``auditor label-studio sync`` on exports: the labels become Label Studio's, whatever the
webhook missed; a second run changes nothing; a stale export loses to the webhook; the
settings are the one mapping; deleted tasks and predictions (model raters by version)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from auditor.ingestion.errors import IngestRejected
from auditor.services.label_studio.settings import update_settings
from auditor.services.label_studio.sync import sync_project
from auditor.services.label_studio.webhook import receive_event
from auditor.services.projects.projects import create_project

CATEGORIES = ["Normal", "Pneumonia", "Effusion"]
T0 = datetime(2026, 11, 27, 9, tzinfo=UTC)


def stamp(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def choices(label: str, control: str = "finding") -> dict:
    return {"from_name": control, "to_name": "image", "type": "choices",
            "value": {"choices": [label]}}  # fmt: skip


def annotation(ident: int, task: int, user: int, label: str, *, edited: float = 0,
               **extra: object) -> dict:  # fmt: skip
    return {
        "id": ident, "task": task, "completed_by": user, "result": [choices(label)],
        "was_cancelled": False, "created_at": stamp(ident),
        "updated_at": stamp(ident + edited), "parent_prediction": None, **extra,
    }  # fmt: skip


def task(ident: int, *annotations: dict, predictions: list | None = None) -> dict:
    return {
        "id": ident, "data": {"image": f"{ident}.png", "case": f"case-{ident:03d}"},
        "annotations": list(annotations), "predictions": predictions or [],
        "created_at": stamp(0), "updated_at": stamp(0),
    }  # fmt: skip


def export() -> list[dict]:
    return [
        task(1, annotation(1, 1, 2, "Normal"), annotation(2, 1, 3, "Normal")),
        task(2, annotation(3, 2, 2, "Pneumonia"), annotation(4, 2, 3, "Effusion")),
        task(3, annotation(5, 3, 2, "Effusion"), annotation(6, 3, 3, "Effusion")),
    ]


def labels(uow) -> dict[str, tuple[str, str, str, str]]:
    """{client key: (item, rater, label, rater kind)}."""
    with uow:
        rows = uow.session_for_tests.execute(
            text(
                "SELECT l.client_key, i.external_id, r.external_id, c.name, r.kind FROM labels l "
                "JOIN items i ON i.id = l.item_id JOIN raters r ON r.id = l.rater_id "
                "JOIN categories c ON c.id = l.category_id"
            )
        ).all()
    return {key: (item, rater, label, kind) for key, item, rater, label, kind in rows}


def test_the_sync_creates_updates_deletes_and_a_second_run_changes_nothing(uow) -> None:
    create_project(uow, "cxr", CATEGORIES)
    state = export()
    # the webhook saw only part of it, and one annotation it saw is gone from Label Studio
    receive_event(uow, "cxr", {"action": "ANNOTATION_CREATED", "task": state[0],
                               "annotation": state[0]["annotations"][0]})  # fmt: skip
    gone = annotation(9, 3, 4, "Normal")
    receive_event(uow, "cxr", {"action": "ANNOTATION_CREATED", "annotation": gone})
    # an edit the webhook missed
    state[1]["annotations"][1] = annotation(4, 2, 3, "Pneumonia", edited=5)
    receive_event(uow, "cxr", {"action": "ANNOTATION_CREATED",
                               "annotation": annotation(4, 2, 3, "Effusion")})  # fmt: skip
    first = sync_project(uow, "cxr", state)
    assert (first.created, first.updated, first.deleted, first.unchanged) == (4, 1, 1, 1)
    assert labels(uow) == {
        "label-studio:1": ("1", "2", "Normal", "human"),
        "label-studio:2": ("1", "3", "Normal", "human"),
        "label-studio:3": ("2", "2", "Pneumonia", "human"),
        "label-studio:4": ("2", "3", "Pneumonia", "human"),
        "label-studio:5": ("3", "2", "Effusion", "human"),
        "label-studio:6": ("3", "3", "Effusion", "human"),
    }
    again = sync_project(uow, "cxr", state)
    assert (again.created, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 6)


def test_a_stale_export_loses_to_the_webhook(uow) -> None:
    create_project(uow, "cxr", CATEGORIES)
    old = export()
    sync_project(uow, "cxr", old)
    # after the export was taken: an edit, a deletion and a new annotation, all by webhook
    receive_event(uow, "cxr", {"action": "ANNOTATION_UPDATED",
                               "annotation": annotation(3, 2, 2, "Normal", edited=30)})  # fmt: skip
    receive_event(uow, "cxr", {"action": "ANNOTATIONS_DELETED", "annotations": [{"id": 5}]})
    newer = annotation(40, 3, 4, "Effusion")
    receive_event(uow, "cxr", {"action": "ANNOTATION_CREATED", "annotation": newer})
    result = sync_project(uow, "cxr", old)  # the old file again
    assert (result.created, result.updated, result.deleted) == (0, 0, 0)
    assert (result.kept_newer, result.deleted_earlier) == (2, 1)
    now = labels(uow)
    assert now["label-studio:3"][2] == "Normal" and "label-studio:5" not in now
    assert "label-studio:40" in now


def test_settings_change_the_mapping_and_the_sync_re_maps_stored_labels(uow) -> None:
    create_project(uow, "cxr", CATEGORIES)
    state = export()
    state[0]["annotations"][0]["result"].append(choices("Good", "quality"))
    sync_project(uow, "cxr", state)
    # two controls in one annotation, none configured: skipped and counted, never refused
    assert "label-studio:1" not in labels(uow)
    update_settings(uow, "cxr", item_field="data.case", from_name="finding")
    result = sync_project(uow, "cxr", state)
    assert result.updated == 5 and result.created == 1
    assert {item for item, *_ in labels(uow).values()} == {"case-001", "case-002", "case-003"}
    # the webhook reads with the same settings: the same item
    event = {"action": "ANNOTATION_CREATED", "task": state[0],
             "annotation": annotation(50, 1, 5, "Normal")}  # fmt: skip
    receive_event(uow, "cxr", event)
    assert labels(uow)["label-studio:50"][0] == "case-001"


def test_a_label_the_project_lacks_refuses_the_sync_naming_its_task_and_annotation(
    uow, count_rows
) -> None:
    create_project(uow, "cxr", CATEGORIES)
    state = export()
    state[2]["annotations"][1] = annotation(6, 3, 3, "Cardiomegaly")
    before = count_rows()
    with pytest.raises(IngestRejected) as refused:
        sync_project(uow, "cxr", state)
    assert "task 3 (id 3), annotation 2 (id 6)" in str(refused.value)
    assert "Cardiomegaly" in str(refused.value)
    assert count_rows() == before


def test_deleted_tasks_take_their_labels_along(uow) -> None:
    create_project(uow, "cxr", CATEGORIES)
    update_settings(uow, "cxr", item_field="data.case")
    sync_project(uow, "cxr", export())
    answer = receive_event(uow, "cxr", {"action": "TASKS_DELETED", "tasks": [{"id": 2}]})
    assert (answer["deleted"], answer["labels_removed"]) == (2, 2)
    assert {item for item, *_ in labels(uow).values()} == {"case-001", "case-003"}
    # a late event for an annotation of the deleted task changes nothing
    edit = {"action": "ANNOTATION_UPDATED", "annotation": annotation(3, 2, 2, "Normal", edited=9)}
    late = receive_event(uow, "cxr", edit)
    assert late["after_delete"] == 1


def prediction(ident: int, task_id: int, label: str, version: str) -> dict:
    return {
        "id": ident, "task": task_id, "model_version": version, "result": [choices(label)],
        "score": 0.9, "created_at": stamp(100 + ident), "updated_at": stamp(100 + ident),
    }  # fmt: skip


def test_predictions_are_model_raters_by_version_and_accepted_ones_are_not_a_second_look(
    uow,
) -> None:
    create_project(uow, "cxr", CATEGORIES)
    state = export()
    state[0]["predictions"] = [prediction(1, 1, "Normal", "judge-v1")]
    state[1]["predictions"] = [prediction(2, 2, "Effusion", "judge-v1"),
                               prediction(3, 2, "Pneumonia", "judge-v2")]  # fmt: skip
    # an annotation accepted from prediction 1 unchanged (the bulk action), one that changed
    # prediction 2's answer
    state[0]["annotations"].append(annotation(7, 1, 1, "Normal", parent_prediction=1))
    state[1]["annotations"].append(annotation(8, 2, 4, "Normal", parent_prediction=2))
    result = sync_project(uow, "cxr", state)
    assert result.skipped == {
        "prediction accepted unchanged (the prediction is the model's label)": 1
    }
    now = labels(uow)
    assert now["label-studio:prediction:1"] == ("1", "judge-v1", "Normal", "model")
    assert now["label-studio:prediction:3"] == ("2", "judge-v2", "Pneumonia", "model")
    assert now["label-studio:8"] == ("2", "4", "Normal", "human")
    assert "label-studio:7" not in now
    # ignored: predictions are not read; the accepted annotation is its clicker's
    update_settings(uow, "cxr", predictions="ignore")
    ignored = sync_project(uow, "cxr", copy.deepcopy(state))
    assert ignored.deleted == 3 and ignored.created == 1
    assert labels(uow)["label-studio:7"] == ("1", "1", "Normal", "human")


def test_the_webhook_compares_with_a_prediction_the_sync_read(uow) -> None:
    create_project(uow, "cxr", CATEGORIES)
    state = export()
    state[0]["predictions"] = [prediction(1, 1, "Normal", "judge-v1")]
    sync_project(uow, "cxr", state)
    bulk = {
        "action": "ANNOTATIONS_CREATED",
        "annotation": [annotation(20, 1, 1, "Normal", parent_prediction=1),
                       annotation(21, 1, 1, "Normal", parent_prediction=77)],
        "task": [state[0]],
    }  # fmt: skip
    answer = receive_event(uow, "cxr", bulk)
    assert answer["stored"] == 0
    assert answer["skipped"] == {
        "prediction accepted unchanged (the prediction is the model's label)": 1,
        "made from a prediction not read yet (the sync reads predictions)": 1,
    }


def test_scheduled_syncs_fall_due_and_a_failure_is_recorded_not_raised(uow) -> None:
    from auditor.services.label_studio.schedule import due_syncs, run_scheduled_sync
    from auditor.services.label_studio.settings import show_settings

    create_project(uow, "cxr", CATEGORIES)
    create_project(uow, "other", CATEGORIES)
    now = datetime.now(UTC)
    assert due_syncs(uow, now) == []
    # port 9 on loopback: nothing listens there
    update_settings(uow, "cxr", url="http://127.0.0.1:9", token="t", ls_project=1, sync_minutes=5)
    assert due_syncs(uow, now) == ["cxr"]
    done = run_scheduled_sync(uow, "cxr", now)
    assert done.status.startswith("error: GET http://127.0.0.1:9/api/projects/1/export")
    shown = show_settings(uow, "cxr")
    assert shown.last_sync_status == done.status and shown.token_set
    assert due_syncs(uow, now + timedelta(minutes=4)) == []
    assert due_syncs(uow, now + timedelta(minutes=5)) == ["cxr"]
