"""Label Studio's webhook, live: payloads written from Label Studio's webhook event reference
(annotation with id, task, completed_by, result, was_cancelled, created_at, updated_at),
through HTTP with the ingest key; and 1,000 events replayed in random order with duplicates
ending with exactly the right labels."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from auditor.api import create_app
from auditor.config import Settings
from auditor.errors import Invalid
from auditor.services.access.keys import create_key
from auditor.services.label_studio.webhook import receive_event
from auditor.services.projects.projects import create_project
from auditor.services.repeats.planner import plan_repeats, update_repeat_settings

CATEGORIES = ["cat", "dog", "bird"]
T0 = datetime(2024, 6, 1, 9, tzinfo=UTC)
PROJECT = {"id": 2, "title": "Pets", "label_config": "<View>...</View>"}


def annotation(
    ident: int, task: int, user: int, choice: str | None, updated: int = 0, **extra: object
) -> dict:
    result = [
        {"value": {"choices": [choice]}, "id": f"r{ident}", "from_name": "pet",
         "to_name": "image", "type": "choices"}
    ] if choice else []  # fmt: skip
    return {
        "id": ident,
        "result": result,
        "was_cancelled": False,
        "ground_truth": False,
        "created_at": (T0 + timedelta(minutes=ident)).isoformat().replace("+00:00", "Z"),
        "updated_at": (T0 + timedelta(minutes=ident, seconds=updated)).isoformat(),
        "lead_time": 12.5,
        "prediction": {},
        "result_count": 0,
        "task": task,
        "completed_by": user,
        **extra,
    }


def event(action: str, *annotations: dict) -> dict:
    if action.startswith("ANNOTATIONS_"):
        return {"action": action, "annotations": list(annotations), "project": PROJECT}
    return {"action": action, "annotation": annotations[0], "project": PROJECT}


def stored(uow) -> dict[str, tuple[str, str, str]]:
    """{client key: (item, rater, label)} of the project's labels."""
    with uow:
        rows = uow.session_for_tests.execute(
            text(
                "SELECT l.client_key, i.external_id, r.external_id, c.name FROM labels l "
                "JOIN items i ON i.id = l.item_id JOIN raters r ON r.id = l.rater_id "
                "JOIN categories c ON c.id = l.category_id"
            )
        ).all()
    return {key: (item, rater, label) for key, item, rater, label in rows}


def test_created_updated_deleted_and_the_counts(uow) -> None:
    create_project(uow, "pets", CATEGORIES)
    first = annotation(1, task=19, user=1, choice="cat")
    answer = receive_event(uow, "pets", event("ANNOTATION_CREATED", first))
    assert answer["stored"] == 1
    assert stored(uow) == {"label-studio:1": ("19", "1", "cat")}
    # a replay writes nothing
    again = receive_event(uow, "pets", event("ANNOTATION_CREATED", first))
    assert (again["stored"], again["duplicates"]) == (0, 1)
    # updated: the label is replaced (a new row: the next recompute sees it)
    changed = annotation(1, task=19, user=1, choice="dog", updated=60)
    answer = receive_event(uow, "pets", event("ANNOTATION_UPDATED", changed))
    assert (answer["stored"], answer["replaced"], answer["labels_removed"]) == (1, 1, 1)
    assert stored(uow) == {"label-studio:1": ("19", "1", "dog")}
    # bulk create: a cancelled (skipped) one counted, another result type ignored with a count
    bulk = event(
        "ANNOTATIONS_CREATED",
        annotation(2, task=20, user=2, choice="bird"),
        annotation(3, task=20, user=3, choice=None, was_cancelled=True),
        {**annotation(4, task=21, user=2, choice="cat"),
         "result": [*annotation(4, 21, 2, "cat")["result"],
                    {"type": "textarea", "value": {"text": ["fluffy"]}, "from_name": "note"}]},
    )  # fmt: skip
    answer = receive_event(uow, "pets", bulk)
    assert answer["stored"] == 2
    assert answer["skipped"] == {"cancelled annotation": 1}
    assert answer["ignored_results"] == {"textarea": 1}
    assert set(stored(uow)) == {"label-studio:1", "label-studio:2", "label-studio:4"}
    # deleted (single and bulk shapes); later events for a deleted annotation are ignored
    receive_event(uow, "pets", {"action": "ANNOTATION_DELETED", "annotation": {"id": 2}})
    answer = receive_event(uow, "pets", event("ANNOTATIONS_DELETED", {"id": 4}))
    assert answer["deleted"] == 1 and answer["labels_removed"] == 1
    late = receive_event(uow, "pets", event("ANNOTATION_UPDATED", annotation(4, 21, 2, "dog", 99)))
    assert (late["stored"], late["after_delete"]) == (0, 1)
    assert set(stored(uow)) == {"label-studio:1"}
    # other actions: 200 with what was ignored
    assert receive_event(uow, "pets", {"action": "PROJECT_UPDATED", "project": PROJECT}) == {
        "ignored": "PROJECT_UPDATED"
    }
    with pytest.raises(Invalid, match="annotation 1: an object with an 'id'"):
        receive_event(uow, "pets", {"action": "ANNOTATION_CREATED", "annotation": {"task": 1}})


def test_over_http_with_its_own_key_and_fulfilling_a_planned_repeat(uow, engine) -> None:
    create_project(uow, "pets", CATEGORIES)
    update_repeat_settings(uow, "pets", min_gap_hours=0, min_gap_items=0, share=1.0)
    ingest_key = create_key(uow, "pets", "ingest")[1]
    webhook_key = create_key(uow, "pets", "label-studio")[1]
    url = engine.url.render_as_string(hide_password=False)
    app = create_app(Settings(database_url=url, broker_url=None))  # type: ignore[arg-type]
    path = "/api/v1/projects/pets/integrations/label-studio"
    body = event("ANNOTATION_CREATED", annotation(7, task=5, user=3, choice="dog"))
    with TestClient(app) as client:
        assert client.post(path, json=body).status_code == 401
        bad = {"Authorization": "Bearer aud_not-a-key"}
        assert client.post(path, json=body, headers=bad).status_code == 401
        # any other key is refused: only a key made for the webhook opens it
        ingest = {"Authorization": f"Bearer {ingest_key}"}
        assert client.post(path, json=body, headers=ingest).status_code == 403
        headers = {"Authorization": f"Bearer {webhook_key}"}
        # and that key opens nothing else
        assert client.get("/api/v1/projects/pets", headers=headers).status_code == 403
        response = client.post(path, json=body, headers=headers)
        assert response.status_code == 200, response.text
        assert response.json()["stored"] == 1
        plan = plan_repeats(uow, "pets", "3", 1, now=datetime.now(UTC) + timedelta(hours=1))
        assert [e["item"] for e in plan["items"]] == ["5"]
        # the rater sees task 5 again in Label Studio: a second annotation of the same task
        again = event("ANNOTATION_CREATED", annotation(8, task=5, user=3, choice="dog"))
        assert client.post(path, json=again, headers=headers).json()["stored"] == 1
        fish = event("ANNOTATION_CREATED", annotation(9, task=6, user=3, choice="fish"))
        rejected = client.post(path, json=fish, headers=headers)
        assert rejected.status_code == 422 and "fish" in rejected.text, rejected.text
        assert "label-studio:9" not in stored(uow)
        # a rejected event is not remembered: corrected and sent again, it is stored
        fixed = event("ANNOTATION_CREATED", annotation(9, task=6, user=3, choice="cat"))
        assert client.post(path, json=fixed, headers=headers).json()["stored"] == 1
        other = client.post(path, json={"action": "TASKS_CREATED"}, headers=headers)
        assert other.status_code == 200 and other.json() == {"ignored": "TASKS_CREATED"}
    with uow:
        query = text("SELECT status FROM planned_repeats")
        status = uow.session_for_tests.execute(query).scalar_one()
    assert status == "fulfilled"


def test_a_thousand_events_in_random_order_with_duplicates_end_right(uow) -> None:
    create_project(uow, "pets", CATEGORIES)
    rng = random.Random(5)
    events: list[dict] = []
    expected: dict[str, tuple[str, str, str]] = {}
    for ident in range(1, 241):
        task, user = rng.randrange(60), rng.randrange(8)
        versions = [rng.choice(CATEGORIES) for _ in range(rng.choice([1, 1, 2, 3]))]
        cancelled = rng.random() < 0.08
        for v, choice in enumerate(versions):
            action = "ANNOTATION_CREATED" if v == 0 else "ANNOTATION_UPDATED"
            extra = {"was_cancelled": True} if cancelled else {}
            events.append(event(action, annotation(ident, task, user, choice, 10 * v, **extra)))
        if rng.random() < 0.15:
            events.append(event("ANNOTATIONS_DELETED", {"id": ident}))
        elif not cancelled:
            expected[f"label-studio:{ident}"] = (str(task), str(user), versions[-1])
    events += [rng.choice(events) for _ in range(1000 - len(events))]  # Label Studio retries
    rng.shuffle(events)
    assert len(events) == 1000
    for one in events:
        receive_event(uow, "pets", one)
    assert stored(uow) == expected


def test_an_export_file_and_the_webhook_recognise_each_others_labels(uow, tmp_path) -> None:
    import json

    from auditor.ingestion.readers import LabelFileReader
    from auditor.services.ingest.labels import import_batches

    create_project(uow, "pets", CATEGORIES)
    tasks = [
        {"id": 19, "data": {"image": "a.png"}, "annotations": [annotation(1, 19, 1, "cat")]},
        {"id": 20, "data": {"image": "b.png"}, "annotations": [annotation(2, 20, 1, "dog")]},
    ]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    reader = LabelFileReader(export, 100, "label-studio")
    imported = import_batches(uow, "pets", reader, label_studio_keys=True)
    assert (imported.inserted, imported.rejected) == (2, False)
    # the webhook then sends one of the same annotations: one label, not a hidden repeat (the
    # webhook's version takes the place of the file's)
    answer = receive_event(uow, "pets", event("ANNOTATION_CREATED", annotation(1, 19, 1, "cat")))
    assert (answer["stored"], answer["labels_removed"]) == (1, 1)
    assert stored(uow) == {
        "label-studio:1": ("19", "1", "cat"),
        "label-studio:2": ("20", "1", "dog"),
    }
    # and the export imported again after the webhook writes nothing either
    reader = LabelFileReader(export, 100, "label-studio")
    again = import_batches(uow, "pets", reader, label_studio_keys=True)
    assert (again.inserted, again.duplicates) == (0, 2)
