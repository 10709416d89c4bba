"""Importing files: bad rows are named by line and field, and the database stays unchanged.

Files are imported in small batches (8 rows), so a bad row near the end arrives after earlier
batches were already written inside the import's transaction: 'unchanged' tests the rollback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.readers import LabelFileReader, ReadOptions
from auditor.services.ingest.labels import ImportResult, import_batches
from auditor.services.projects.projects import create_project
from auditor.storage.unit_of_work import UnitOfWork

HEADER = "item,rater,label,session,labeled_at,key"
BAD_LINE = 27  # 1-based file line of the bad row (the header is line 1)


def _good_lines(count: int = 40) -> list[str]:
    return [
        f"item{n // 3},rater{n % 3},{('yes', 'no')[n % 2]},s{n % 3},"
        f"2024-05-01T10:{n % 60:02d}:00Z,k{n}"
        for n in range(count)
    ]


def _write(path: Path, lines: list[str], encoding: str = "utf-8") -> Path:
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding, errors="surrogateescape"))
    return path


def _import(uow: UnitOfWork, path: Path, batch_size: int = 8) -> ImportResult:
    return import_batches(uow, "p", LabelFileReader(path, batch_size=batch_size))


@pytest.fixture
def project(uow: UnitOfWork) -> str:
    create_project(uow, "p", ["yes", "no"])
    return "p"


def test_good_file_imports_in_batches_then_reimports_as_duplicates(
    uow, project, tmp_path, count_rows
) -> None:
    path = _write(tmp_path / "labels.csv", [HEADER, *_good_lines()])
    result = _import(uow, path)
    assert (result.rows, result.inserted, result.duplicates, result.rejected) == (40, 40, 0, False)
    assert count_rows()["labels"] == 40
    again = _import(uow, path)
    assert (again.inserted, again.duplicates) == (0, 40)
    assert count_rows()["labels"] == 40


BAD_ROWS = {
    "unknown label": ("item1,rater1,maybe,s1,2024-05-01T10:00:00Z,kx", "label", "unknown category"),
    "bad timestamp": ("item1,rater1,yes,s1,2024-05-01T25:00:00Z,kx", "labeled_at", "ISO 8601"),
    "empty id": (",rater1,yes,s1,2024-05-01T10:00:00Z,kx", "item", "is empty"),
    "NUL byte": ("item1,rat\x00er1,yes,s1,2024-05-01T10:00:00Z,kx", "rater", "U+0000"),
    "100k-character field": (
        f"{'i' * 100_000},rater1,yes,s1,2024-05-01T10:00:00Z,kx",
        "item",
        "100000 characters long",
    ),
    "wrong encoding": (
        "item1,ren\udce9,yes,s1,2024-05-01T10:00:00Z,kx",
        "rater",
        "not valid UTF-8",
    ),
    "too few fields": ("item1,rater1,yes", None, "has 3 fields, the header has 6"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_bad_row_is_named_and_nothing_is_written(uow, project, tmp_path, count_rows, case) -> None:
    line, field, message = BAD_ROWS[case]
    lines = [HEADER, *_good_lines()]
    lines[BAD_LINE - 1] = line
    path = _write(tmp_path / "labels.csv", lines)
    before = count_rows()
    result = _import(uow, path)
    assert result.rejected
    assert [(e.row, e.field) for e in result.errors] == [(BAD_LINE, field)]
    assert message in result.errors[0].message
    assert result.inserted == 0
    assert count_rows() == before


def test_latin1_file_names_each_bad_row(uow, project, tmp_path, count_rows) -> None:
    lines = [HEADER, *_good_lines(10)]
    lines[3] = "item1,René,yes,s1,2024-05-01T10:00:00Z,ka"
    lines[8] = "Zoë,rater1,yes,s1,2024-05-01T10:00:00Z,kb"
    path = _write(tmp_path / "labels.csv", lines, encoding="latin-1")
    result = _import(uow, path)
    assert [(e.row, e.field) for e in result.errors] == [(4, "rater"), (9, "item")]
    assert count_rows()["labels"] == 0


def test_errors_from_every_batch_are_reported(uow, project, tmp_path, count_rows) -> None:
    lines = [HEADER, *_good_lines()]
    for line_number in (3, 20, 41):
        lines[line_number - 1] = lines[line_number - 1].replace(",yes,", ",maybe,")
        lines[line_number - 1] = lines[line_number - 1].replace(",no,", ",maybe,")
    result = _import(uow, _write(tmp_path / "labels.csv", lines))
    assert [e.row for e in result.errors] == [3, 20, 41]
    assert result.error_count == 3
    assert count_rows()["labels"] == 0


def test_quoted_newlines_keep_line_numbers(uow, project, tmp_path) -> None:
    lines = [HEADER, 'item1,"rater\nwith a newline",yes,,,', "item2,rater2,maybe,,,"]
    result = _import(uow, _write(tmp_path / "labels.csv", lines))
    assert [(e.row, e.field) for e in result.errors] == [(2, "rater"), (4, "label")]


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("item,rater,session", "missing column(s) label"),
        ("item,rater,label,labelled_at", "unknown column(s) 'labelled_at'"),  # with --strict
        ("item,rater,label,item", "repeated column(s) item"),
    ],
)
def test_bad_header_is_refused_before_any_row(
    uow, project, tmp_path, count_rows, header, message
) -> None:
    path = _write(tmp_path / "labels.csv", [header, "a,b,yes,c"])
    reader = LabelFileReader(path, batch_size=8, options=ReadOptions(strict=True))
    with pytest.raises(FileFormatError, match="line 1") as caught:
        import_batches(uow, "p", reader)
    assert message in str(caught.value)
    assert count_rows()["labels"] == 0


def test_jsonl_bad_lines(uow, project, tmp_path, count_rows) -> None:
    good = [
        json.dumps({"item": f"i{n}", "rater": "r", "label": "yes", "key": n}) for n in range(20)
    ]
    lines = list(good)
    lines[4] = '{"item": "i4", "rater": "r", "label": "yes"'  # line 5: cut short
    lines[9] = json.dumps({"item": "i9", "rater": "r", "label": "maybe"})  # line 10
    lines[14] = json.dumps({"item": "i14", "rater": "r", "lable": "yes"})  # line 15: no label
    lines[17] = json.dumps(["i17", "r", "yes"])  # line 18
    path = tmp_path / "labels.jsonl"
    _write(path, lines)
    raw = path.read_bytes().replace(b'"i19"', b'"i\xe919"')  # line 20: not UTF-8
    path.write_bytes(raw)
    result = _import(uow, path)
    assert [(e.row, e.field) for e in result.errors] == [
        (5, None), (10, "label"), (15, "label"), (18, None), (20, None),
    ]  # fmt: skip
    assert "not valid UTF-8" in result.errors[-1].message
    assert count_rows()["labels"] == 0
    path.write_text("\n".join(good) + "\n")
    assert _import(uow, path).inserted == 20
