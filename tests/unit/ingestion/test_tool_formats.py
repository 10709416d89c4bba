"""Import formats as plugins: Prodigy's ``db-out`` and doccano's export, read from files in the
shapes those tools write (Prodigy's task format with its ``_annotator_id``, ``_session_id``,
``_input_hash``, ``_task_hash``, ``_timestamp``; doccano's per-member JSONL as pandas writes
it, zipped), and the recipe's path: a format registered in ``FORMATS`` is read by
``auditor stats --format`` with no other change."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.ingestion.arrays import read_with_dropped
from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.formats import FORMATS, find_format
from auditor.ingestion.formats.base import Batcher, Source
from auditor.ingestion.readers import LabelFileReader, ReadOptions

OPTIONS = [{"id": "POSITIVE", "text": "positive"}, {"id": "NEGATIVE", "text": "negative"}]


def choice_task(text: str, accept: list[str], annotator: str, stamp: int,
                answer: str = "accept") -> dict:  # fmt: skip
    return {
        "text": text, "options": OPTIONS, "_input_hash": hash(text) % 10**9,
        "_task_hash": (hash(text) + 7) % 10**9, "_view_id": "choice",
        "config": {"choice_style": "single"}, "accept": accept, "answer": answer,
        "_timestamp": stamp, "_annotator_id": f"sentiment-{annotator}",
        "_session_id": f"sentiment-{annotator}",
    }  # fmt: skip


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def read(path: Path, file_format: str, **options: object) -> tuple[LabelFileReader, list[dict]]:
    reader = LabelFileReader(path, 3, file_format, ReadOptions(**options))  # type: ignore[arg-type]
    rows = []
    for batch in reader:
        names = ("item", "rater", "label", "session", "labeled_at", "rater_kind", "key")
        columns = {n: getattr(batch, n) for n in names if getattr(batch, n) is not None}
        rows += [{n: columns[n][i] for n in columns} for i in range(len(batch.rows))]
    return reader, rows


def test_prodigy_db_out_choice_and_binary_answers(tmp_path: Path) -> None:
    texts = ["great film", "dull plot", "fine acting"]
    records = [
        choice_task(texts[0], ["POSITIVE"], "alice", 1_707_211_049),
        choice_task(texts[0], ["POSITIVE"], "bob", 1_707_211_100),
        choice_task(texts[1], ["NEGATIVE"], "alice", 1_707_211_200),
        choice_task(texts[1], [], "bob", 1_707_211_300),  # nothing accepted
        choice_task(texts[2], ["POSITIVE"], "bob", 1_707_211_400, answer="ignore"),
        choice_task(texts[2], ["POSITIVE"], "alice", 1_707_211_500, answer="reject"),
        # textcat.teach: a binary question about one label
        {"text": texts[2], "label": "POSITIVE", "_input_hash": 5, "_task_hash": 55,
         "answer": "reject", "_view_id": "classification", "_timestamp": 1_707_211_600,
         "_annotator_id": "sentiment-bob", "_session_id": "sentiment-bob"},
        # spans are not a category
        {"text": "x", "spans": [], "_view_id": "ner_manual", "answer": "accept",
         "_annotator_id": "sentiment-bob", "_input_hash": 1, "_task_hash": 2},
    ]  # fmt: skip
    path = write_lines(tmp_path / "sentiment.jsonl", records)
    with pytest.raises(FileFormatError):
        LabelFileReader(path, 10, "prodigy-v2")
    reader, rows = read(path, "prodigy")
    assert [(r["rater"], r["label"]) for r in rows] == [
        ("sentiment-alice", "POSITIVE"),
        ("sentiment-bob", "POSITIVE"),
        ("sentiment-alice", "NEGATIVE"),
        ("sentiment-bob", "reject"),
    ]
    assert rows[0]["item"] == rows[1]["item"] == records[0]["_input_hash"]  # the same input
    assert rows[3]["item"] == 55  # a binary answer is about the question (input and label)
    assert rows[0]["labeled_at"] == "2024-02-06T09:17:29+00:00"
    assert rows[0]["session"] == "sentiment-alice"
    assert rows[0]["key"] == f"prodigy:sentiment-alice:{records[0]['_task_hash']}:1707211049"
    assert dict(reader.skipped) == {
        "no option accepted": 1,
        "answer 'ignore'": 1,
        "choice task rejected": 1,
        "neither a choice nor a binary label (interface 'ner_manual')": 1,
    }
    # the measures read it like any file: two raters agree on the one item both labeled
    arrays, dropped = read_with_dropped(LabelFileReader(path, 100, "prodigy"), None)
    assert (len(arrays.item), dropped) == (4, 0)


def doccano_member(path: Path, examples: list[dict]) -> None:
    # as pandas.DataFrame.to_json(orient="records", lines=True, force_ascii=False) writes it
    path.write_text("\n".join(json.dumps(e, ensure_ascii=False).replace("/", "\\/")
                              for e in examples) + "\n")  # fmt: skip


def test_doccano_zip_of_member_files(tmp_path: Path) -> None:
    alice = tmp_path / "alice.jsonl"
    bob = tmp_path / "bob.jsonl"
    doccano_member(alice, [
        {"id": 1, "text": "great film / 10", "label": ["positive"], "Comments": []},
        {"id": 2, "text": "dull", "label": [], "Comments": []},
        {"id": 3, "text": "mixed", "label": ["positive", "negative"], "Comments": []},
    ])  # fmt: skip
    doccano_member(bob, [
        {"id": 1, "text": "great film / 10", "label": ["positive"], "Comments": []},
        {"id": 2, "text": "dull", "label": ["negative"], "Comments": ["meh"]},
    ])  # fmt: skip
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.write(bob, "bob.jsonl")
        z.write(alice, "alice.jsonl")
    assert find_format(archive).name == "doccano"
    reader, rows = read(archive, None)  # type: ignore[arg-type]
    assert [(r["item"], r["rater"], r["label"]) for r in rows] == [
        (1, "alice", "positive"), (1, "bob", "positive"), (2, "bob", "negative"),
    ]  # fmt: skip
    assert rows[0]["key"] == "doccano:alice:1"
    assert dict(reader.skipped) == {
        "example not labeled by the member": 1,
        "several categories (multi-label)": 1,
    }
    # one member's file, named after her, with --format
    _, single = read(bob, "doccano")
    assert {r["rater"] for r in single} == {"bob"}
    # a bad line is named by member and line
    broken = tmp_path / "carol.jsonl"
    broken.write_text('{"id": 1, "label": ["positive"]}\n{"id": 2, "label": \n')
    reader = LabelFileReader(broken, 10, "doccano")
    batches = list(reader)
    (error,) = [e for b in batches for e in b.errors]
    assert reader.where(error.row) == "row 2 (carol.jsonl, line 2)"


def test_doccano_shared_annotations_are_refused_with_the_reason(tmp_path: Path) -> None:
    merged = tmp_path / "all.jsonl"
    doccano_member(merged, [{"id": 1, "text": "t", "label": ["a", "b"]}])
    with pytest.raises(FileFormatError, match="Share annotations across all users"):
        list(LabelFileReader(merged, 10, "doccano"))


class TsvOfThree:
    """The recipe's worked example, as a test: item<TAB>rater<TAB>label, no header."""

    name: str = "three-columns"
    extensions: tuple[str, ...] = ()
    summary: str = "item, rater and label separated by tabs, no header"

    def batches(self, binary: BinaryIO, source: Source) -> Iterator:
        batcher = Batcher(source.batch_size)
        for line, raw in enumerate(binary, start=1):
            item, rater, label = raw.decode().rstrip("\n").split("\t")
            if full := batcher.add(line, {"item": item, "rater": rater, "label": label}):
                yield full
        if (rest := batcher.rest()) is not None:
            yield rest


def test_a_registered_format_is_read_by_the_commands(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(FORMATS, TsvOfThree.name, TsvOfThree())
    path = tmp_path / "labels.txt"
    path.write_text("".join(f"i{i}\tr{r}\t{'ab'[(i + (r == 2 and i % 5 == 0)) % 2]}\n"
                            for i in range(20) for r in (1, 2)))  # fmt: skip
    done = CliRunner().invoke(app, ["stats", str(path), "--format", "three-columns", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["measures"]["observed_agreement"]["value"] == 0.8
    unknown = CliRunner().invoke(app, ["stats", str(path), "--format", "four-columns"])
    assert unknown.exit_code == 2 and "three-columns" in unknown.output
