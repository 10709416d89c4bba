"""Streaming readers: batch sizes, line numbers, BOM, blank lines, formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.readers import LabelFileReader


def _write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_csv_batches_and_line_numbers(tmp_path) -> None:
    body = "\ufeffItem, Rater ,label\n" + "".join(f"i{n},r,yes\n" for n in range(10))
    body += "\n" + "i10,r,yes\n"  # a blank line still counts as a line
    reader = LabelFileReader(_write(tmp_path, "a.csv", body.encode()), batch_size=4)
    batches = list(reader)
    assert [len(b) for b in batches] == [4, 4, 3]
    assert batches[0].rows == [2, 3, 4, 5]
    assert batches[-1].rows == [10, 11, 13]
    assert batches[0].item == ["i0", "i1", "i2", "i3"]
    assert batches[0].session is None  # absent column
    assert reader.position == reader.size


def test_jsonl_batches_and_line_numbers(tmp_path) -> None:
    lines = [b'{"item": "a", "rater": "r", "label": "yes", "session": 3}', b"", b"[]", b"{bad"]
    reader = LabelFileReader(_write(tmp_path, "a.ndjson", b"\n".join(lines)), batch_size=10)
    (batch,) = list(reader)
    assert batch.rows == [1]
    assert batch.session == [3]
    assert [(e.row, e.message.split(":")[0]) for e in batch.errors] == [
        (3, "must be a JSON object, got list"),
        (4, "is not valid JSON"),
    ]


def test_overlong_jsonl_line_is_skipped_without_reading_it_whole(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("auditor.ingestion.formats.jsonl.MAX_LINE_BYTES", 100)
    content = b'{"item": "' + b"x" * 1000 + b'"}\n{"item": "a", "rater": "r", "label": "yes"}\n'
    (batch,) = list(LabelFileReader(_write(tmp_path, "a.jsonl", content), batch_size=10))
    assert [(e.row, e.message) for e in batch.errors] == [(1, "is longer than 100 bytes")]
    assert batch.rows == [2]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("a.csv", b"", "is empty"),
        ("a.xlsx", b"item,rater,label\n", "unknown file type"),
    ],
)
def test_unreadable_files(tmp_path, name, content, message) -> None:
    with pytest.raises(FileFormatError, match=message):
        list(LabelFileReader(_write(tmp_path, name, content), batch_size=10))
