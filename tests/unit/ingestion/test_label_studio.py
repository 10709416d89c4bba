"""The Label Studio mapping, on annotations written from its documented export format
(labelstud.io/guide/task_format): one annotation -> one label row, or a counted skip."""

from __future__ import annotations

import pytest

from auditor.ingestion.label_studio import (
    CANCELLED,
    NO_CHOICE,
    SEVERAL_CHOICES,
    SEVERAL_CONTROLS,
    LabelStudioFormatError,
    LabelStudioOptions,
    annotation_to_row,
    export_records,
)

TASK = {"id": 7, "data": {"image": "https://example.com/1.jpg", "case_id": "C-7"}}
DEFAULT = LabelStudioOptions()


def choices(value: list[str], from_name: str = "diagnosis") -> dict:
    return {
        "id": "Dx_aB91ISN",
        "from_name": from_name,
        "to_name": "img",
        "type": "choices",
        "value": {"choices": value},
    }


def annotation(result: list[dict], completed_by: object = 10, **extra: object) -> dict:
    return {
        "id": 1001,
        "result": result,
        "was_cancelled": False,
        "ground_truth": False,
        "created_at": "2021-03-09T22:16:08.728353Z",
        "completed_by": completed_by,
        "task": 7,
        **extra,
    }


RECTANGLE = {
    "from_name": "tag",
    "to_name": "img",
    "type": "rectanglelabels",
    "value": {"x": 50.8, "y": 5.8, "width": 12.4, "height": 10.4, "rectanglelabels": ["Moon"]},
}


def test_choices_give_one_row_rater_is_the_user_id() -> None:
    by_id = annotation_to_row(TASK, annotation([choices(["benign"])]), DEFAULT)
    assert by_id.record == {
        "item": 7,
        "rater": 10,
        "label": "benign",
        "labeled_at": "2021-03-09T22:16:08.728353Z",
        "key": "label-studio:1001",  # the webhook's key for the same annotation
    }
    # an export may carry the user object: its id names her, as the webhook (ids only) does
    as_object = annotation([choices(["benign"])], {"id": 10, "email": "ann@example.com"})
    assert annotation_to_row(TASK, as_object, DEFAULT).record["rater"] == 10


def test_item_field_reads_the_task_data() -> None:
    options = LabelStudioOptions(item_field="data.case_id")
    assert annotation_to_row(TASK, annotation([choices(["a"])]), options).record["item"] == "C-7"


def test_skips_are_counted_with_a_reason() -> None:
    cancelled = annotation([choices(["a"])], was_cancelled=True)
    assert annotation_to_row(TASK, cancelled, DEFAULT).skipped == CANCELLED
    only_boxes = annotation_to_row(TASK, annotation([RECTANGLE]), DEFAULT)
    assert (only_boxes.skipped, only_boxes.ignored) == (NO_CHOICE, ("rectanglelabels",))
    mixed = annotation_to_row(TASK, annotation([RECTANGLE, choices(["a"])]), DEFAULT)
    assert mixed.record["label"] == "a" and mixed.ignored == ("rectanglelabels",)
    multi = annotation_to_row(TASK, annotation([choices(["a", "b"])]), DEFAULT)
    assert multi.skipped == SEVERAL_CHOICES


def test_several_controls_are_skipped_until_from_name_names_one() -> None:
    two = annotation([choices(["a"], "diagnosis"), choices(["good"], "quality")])
    assert annotation_to_row(TASK, two, DEFAULT).skipped == SEVERAL_CONTROLS
    picked = annotation_to_row(TASK, two, LabelStudioOptions(from_name="quality"))
    assert picked.record["label"] == "good"
    # an annotation with only the other control is skipped, never refused
    quality_only = annotation([choices(["Poor"], "quality")])
    only = annotation_to_row(TASK, quality_only, LabelStudioOptions(from_name="diagnosis"))
    assert (only.record, only.skipped) == (None, "no 'diagnosis' choice")


def test_an_export_is_a_list_of_tasks_and_two_looks_stay_two() -> None:
    task = {**TASK, "annotations": [annotation([choices(["a"])]), annotation([choices(["b"])])]}
    rows = [mapped.record for _, mapped in export_records([task], DEFAULT)]
    assert [(r["item"], r["rater"], r["label"]) for r in rows] == [(7, 10, "a"), (7, 10, "b")]
    with pytest.raises(LabelStudioFormatError, match="list of tasks"):
        list(export_records({"tasks": []}, DEFAULT))
