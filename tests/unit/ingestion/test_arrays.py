"""A label file read into ``LabelArrays``: the import's checks, across batches, no database."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from auditor.ingestion.arrays import read_label_arrays
from auditor.ingestion.errors import FileFormatError, IngestRejected

ROWS = [
    {"item": "i1", "rater": "ann", "label": "yes", "labeled_at": "2026-01-01T10:00:00Z"},
    {"item": "i1", "rater": "clf", "label": "no", "rater_kind": "model"},
    {"item": "i2", "rater": "ann", "label": "no", "labeled_at": "2026-01-02T10:00:00+01:00"},
    {"item": "i2", "rater": "clf", "label": "no", "key": "k1"},
    {"item": "i2", "rater": "clf", "label": "no", "key": "k1"},  # a resent label: counted once
]


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    columns = ["item", "rater", "label", "labeled_at", "rater_kind", "key"]
    lines = [",".join(columns)] + [",".join(row.get(c, "") for c in columns) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("batch_size", [1, 2, 1000])
def test_csv_and_jsonl_give_the_same_arrays(tmp_path: Path, batch_size: int) -> None:
    csv_file = write_csv(tmp_path / "labels.csv", ROWS)
    jsonl_file = tmp_path / "labels.jsonl"
    jsonl_file.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    for path, header_lines in ((csv_file, 1), (jsonl_file, 0)):
        arrays = read_label_arrays(path, batch_size=batch_size)
        assert arrays.category_names == ("no", "yes")  # sorted labels seen
        assert arrays.rater_names == ("ann", "clf") and arrays.item_names == ("i1", "i2")
        assert arrays.item.tolist() == [0, 0, 1, 1]
        assert arrays.rater.tolist() == [0, 1, 0, 1]
        assert arrays.category.tolist() == [1, 0, 0, 0]
        assert arrays.rater_is_model.tolist() == [False, True]
        # labeled_at in microseconds (offsets honoured); the file line where there is none
        first = 1_767_261_600 * 1_000_000
        lines = [2 + header_lines, 4 + header_lines]
        assert arrays.order.tolist() == [first, lines[0], first + 23 * 3_600_000_000, lines[1]]


def test_given_categories_set_the_order_and_name_every_outside_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "labels.csv", ROWS)
    arrays = read_label_arrays(path, ["yes", "no"])
    assert arrays.category.tolist() == [0, 1, 1, 1]
    with pytest.raises(IngestRejected) as caught:
        read_label_arrays(path, ["no", "maybe"], batch_size=1)
    assert [(e.row, e.field) for e in caught.value.errors] == [(2, "label")]
    assert "'yes' is not one of no, maybe" in str(caught.value)


def test_a_rater_changing_kind_across_batches_is_refused(tmp_path: Path) -> None:
    rows = [
        {"item": "i1", "rater": "a", "label": "x", "rater_kind": "human"},
        {"item": "i2", "rater": "a", "label": "x"},
        {"item": "i3", "rater": "a", "label": "x", "rater_kind": "model"},
    ]
    path = write_csv(tmp_path / "labels.csv", rows)
    with pytest.raises(IngestRejected) as caught:
        read_label_arrays(path, batch_size=1)
    assert [(e.row, e.field) for e in caught.value.errors] == [(4, "rater_kind")]
    assert "rater 'a' is 'model' here but 'human' in row 2" in str(caught.value)


def test_bad_rows_of_every_batch_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("item,rater,label\n1,,x\n2,a,x\n3,b,\n4,c,x,extra\n")
    with pytest.raises(IngestRejected) as caught:
        read_label_arrays(path, batch_size=1)
    assert [(e.row, e.field) for e in caught.value.errors] == [
        (2, "rater"),
        (4, "label"),
        (5, None),
    ]
    assert caught.value.total == 3


def test_a_file_without_a_required_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("item,rater\n1,a\n")
    with pytest.raises(FileFormatError, match="missing column"):
        read_label_arrays(path)


def test_a_client_key_reused_for_another_label_in_a_later_batch(tmp_path: Path) -> None:
    rows = [
        {"item": "i1", "rater": "a", "label": "x", "key": "k"},
        {"item": "i2", "rater": "a", "label": "x", "key": "k"},
    ]
    path = write_csv(tmp_path / "labels.csv", rows)
    with pytest.raises(IngestRejected) as caught:
        read_label_arrays(path, batch_size=1)
    assert [(e.row, e.field) for e in caught.value.errors] == [(3, "key")]
    assert "client key 'k' is used in row 2 for a different label" in str(caught.value)


def test_a_header_only_file_gives_empty_arrays(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("item,rater,label\n")
    arrays = read_label_arrays(path)
    assert arrays.n_labels == 0 and arrays.category_names == ()
    assert arrays.item.dtype == np.int64 and arrays.rater_is_model.shape == (0,)
