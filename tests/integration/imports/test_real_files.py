"""Files as other tools write them: delimiters, BOM, extra columns, other column names, and
Label Studio exports; ``auditor stats`` reads them with the same options."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.services.projects.projects import create_project

ROWS = [(f"i{n // 3}", f"r{n % 3}", ("cat", "dog")[(n // 3) % 2]) for n in range(12)]


@pytest.fixture
def cli(monkeypatch, database_url: str, uow) -> Iterator[Callable[..., Any]]:
    create_project(uow, "pets", ["cat", "dog"])
    runner = CliRunner()

    def run(*args: str):
        monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
        get_settings.cache_clear()
        return runner.invoke(app, list(args))

    yield run
    get_settings.cache_clear()


def _stored(engine) -> list[tuple[str, str, str]]:
    query = (
        "SELECT i.external_id, r.external_id, c.name FROM labels l "
        "JOIN items i ON i.id = l.item_id JOIN raters r ON r.id = l.rater_id "
        "JOIN categories c ON c.id = l.category_id ORDER BY l.id"
    )
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(query))]


def _write(path: Path, header: list[str], rows: list[tuple], sep: str, bom: bool = False) -> str:
    body = "\n".join(sep.join(map(str, row)) for row in [tuple(header), *rows]) + "\n"
    path.write_bytes(("\ufeff" if bom else "").encode() + body.encode())
    return str(path)


@pytest.mark.parametrize(
    ("sep", "name", "bom"),
    [
        ("\t", "labels.tsv", False),
        (";", "labels.csv", False),
        ("|", "labels.txt", True),
        (",", "labels.csv", True),
    ],
    ids=["tab", "semicolon", "pipe-bom", "comma-bom"],
)
def test_delimiter_is_sniffed_and_a_bom_skipped(cli, engine, tmp_path, sep, name, bom) -> None:
    path = _write(tmp_path / name, ["item", "rater", "label"], ROWS, sep, bom)
    result = cli("import", "pets", path)
    assert result.exit_code == 0, result.stderr
    assert _stored(engine) == ROWS


def test_forced_delimiter_and_a_header_that_reads_as_one_column(cli, engine, tmp_path) -> None:
    path = _write(tmp_path / "labels.csv", ["item", "rater", "label"], ROWS, ";")
    wrong = cli("import", "pets", path, "--delimiter", ",")
    assert wrong.exit_code == 1
    assert "missing column(s) item, rater, label" in wrong.stderr
    assert "delimiter ','" in wrong.stderr and "item;rater;label" in wrong.stderr
    assert cli("import", "pets", path, "--delimiter", "x").exit_code == 2
    assert cli("import", "pets", path, "--delimiter", ";").exit_code == 0
    assert len(_stored(engine)) == 12


def test_extra_columns_are_ignored_with_one_line_unless_strict(cli, engine, tmp_path) -> None:
    rows = [(*row, "note", 0.9) for row in ROWS]
    path = _write(tmp_path / "labels.csv", ["item", "rater", "label", "Notes", "conf"], rows, ",")
    strict = cli("import", "pets", path, "--strict")
    assert strict.exit_code == 1 and "unknown column(s) 'Notes', 'conf'" in strict.stderr
    assert _stored(engine) == []
    result = cli("import", "pets", path)
    assert result.exit_code == 0, result.stderr
    notices = [line for line in result.stderr.splitlines() if "ignored column" in line]
    assert notices == ["labels.csv: ignored column(s) 'Notes', 'conf' (--strict refuses them)"]
    assert _stored(engine) == ROWS


def test_map_names_the_columns_of_another_tool(cli, engine, tmp_path) -> None:
    rows = [(row[0], row[1], row[2], "2024-05-01T10:00:00Z", "x") for row in ROWS]
    header = ["case_id", "annotator", "diagnosis", "when", "item"]
    path = _write(tmp_path / "export.csv", header, rows, ",")
    mapping = "item=case_id,rater=annotator,label=diagnosis,labeled_at=when"
    missing = cli("import", "pets", path, "--map", "item=case")
    assert missing.exit_code == 1 and "no column 'case'" in missing.stderr
    assert cli("import", "pets", path, "--map", "colour=case_id").exit_code == 2
    result = cli("import", "pets", path, "--map", mapping)
    assert result.exit_code == 0, result.stderr
    assert "ignored column(s) 'item'" in result.stderr  # its own 'item' yields to the map
    assert _stored(engine) == ROWS
    jsonl = tmp_path / "export.jsonl"
    jsonl.write_text(
        "\n".join(
            json.dumps({"case_id": f"j{n}", "annotator": "r9", "diagnosis": "dog"})
            for n in range(3)
        )
    )
    assert cli("import", "pets", str(jsonl), "--map", mapping).exit_code == 0
    assert _stored(engine)[-3:] == [(f"j{n}", "r9", "dog") for n in range(3)]


def _choice(value: str, from_name: str = "diagnosis") -> dict:
    return {"from_name": from_name, "to_name": "img", "type": "choices",
            "value": {"choices": [value]}}  # fmt: skip


def _annotation(user: object, value: str | None, minute: int, **extra: object) -> dict:
    result = [_choice(value)] if value else []
    result.append({"from_name": "box", "to_name": "img", "type": "rectanglelabels",
                   "value": {"x": 1, "y": 2, "width": 3, "height": 4,
                             "rectanglelabels": ["lesion"]}})  # fmt: skip
    return {"id": minute, "completed_by": user, "was_cancelled": False, "ground_truth": False,
            "created_at": f"2024-05-01T10:{minute:02d}:00.123456Z", "result": result,
            "lead_time": 4.2, **extra}  # fmt: skip


EXPORT = [
    {"id": 1, "data": {"image": "a.jpg", "case": "C1"}, "annotations": [
        _annotation(10, "cat", 1),
        _annotation({"id": 11, "email": "bo@example.com"}, "cat", 2),
        _annotation(10, "dog", 3),  # the same user again: a second look
    ]},
    {"id": 2, "data": {"image": "b.jpg", "case": "C2"}, "annotations": [
        _annotation(10, "dog", 4),
        _annotation(11, "cat", 5, was_cancelled=True),
        _annotation(12, None, 6),  # boxes only, no choice
    ], "predictions": []},
]  # fmt: skip


def test_label_studio_export(cli, engine, tmp_path) -> None:
    path = tmp_path / "project-3-at-2024.json"
    path.write_text(json.dumps(EXPORT))
    # a project reads Label Studio with its settings: the webhook and the sync read the same
    refused = cli("import", "pets", str(path), "--item-field", "data.case")
    assert refused.exit_code == 1
    assert "auditor label-studio settings pets --item-field data.case" in refused.stderr
    assert cli("label-studio", "settings", "pets", "--item-field", "data.case").exit_code == 0
    result = cli("import", "pets", str(path))
    assert result.exit_code == 0, result.stderr
    assert "4 inserted" in result.stdout
    # the rater is the user id, also where the export carries the user object (the webhook
    # only ever sends the id: one person, one rater)
    assert _stored(engine) == [
        ("C1", "10", "cat"), ("C1", "11", "cat"), ("C1", "10", "dog"), ("C2", "10", "dog"),
    ]  # fmt: skip
    # The boxes of the 5 annotations not cancelled (a cancelled one is not looked into).
    assert "skipped 1 cancelled annotation(s), 1 no choices result(s)" in result.stderr
    # issue 27: results of other kinds are said to be left out, not read as lost labels
    assert "left out 5 'rectanglelabels' results" in result.stderr
    assert "no label of the project is lost" in result.stderr
    again = cli("import", "pets", str(path), "--item-field", "data.case")
    assert "0 inserted, 4 duplicates" in again.stdout  # created_at identifies each look


def test_label_studio_several_controls(cli, engine, tmp_path) -> None:
    annotation = _annotation(10, "cat", 1)
    annotation["result"].append(_choice("dog", "second_opinion"))
    path = tmp_path / "export.json"
    path.write_text(json.dumps([{"id": 1, "data": {}, "annotations": [annotation]}]))
    # skipped and counted, never refused: the file is still read
    skipped = cli("import", "pets", str(path))
    assert skipped.exit_code == 0 and "0 inserted" in skipped.stdout
    assert "skipped 1 choices in several controls (set from_name)" in skipped.stderr
    assert cli("label-studio", "settings", "pets", "--from-name", "second_opinion").exit_code == 0
    picked = cli("import", "pets", str(path))
    assert picked.exit_code == 0, picked.stderr
    assert _stored(engine) == [("1", "10", "dog")]


def test_stats_takes_the_same_options_and_shows_the_vocabulary(cli, tmp_path) -> None:
    rows = [*ROWS, ("i9", "r1", "kat"), ("i9", "r2", "Dog")]
    path = _write(tmp_path / "labels.tsv", ["case", "who", "label"], rows, "\t")
    result = cli("stats", path, "--map", "item=case,rater=who")
    assert result.exit_code == 0, result.stderr
    assert "categories inferred from the file" in result.stderr
    assert "Dog 1, cat 6, dog 6, kat 1" in result.stderr
    names = tmp_path / "categories.txt"
    names.write_text("cat\ndog\nDog\nkat, a typo\n")
    fixed = cli("stats", path, "--map", "item=case,rater=who", "--categories", str(names))
    assert fixed.exit_code == 1 and "'kat' is not one of" in fixed.stderr
    names.write_text("cat\ndog\nDog\nkat\nbird, or fish\n")
    fixed = cli("stats", path, "--map", "item=case,rater=who", "--categories", str(names))
    assert fixed.exit_code == 0, fixed.stderr
    assert "categories cat, dog, Dog, kat, bird, or fish" in fixed.stdout
    ls = tmp_path / "export.json"
    ls.write_text(json.dumps(EXPORT))
    from_ls = cli("stats", str(ls), "--item-field", "data.case", "--json")
    assert from_ls.exit_code == 0, from_ls.stderr
    assert json.loads(from_ls.stdout)["n_labels"] == 4
