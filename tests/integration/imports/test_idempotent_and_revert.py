"""Importing twice is safe, every import is recorded, and an import can be reverted.

Through the CLI (in-process, both backends): a file with labeled_at re-imports as duplicates;
a file with keys too; a file with neither is refused naming the earlier import unless
--again; a revert deletes exactly that import's labels, in one transaction.
"""

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
from auditor.ingestion.errors import IngestRejected
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project

TIMED = ["item,rater,label,labeled_at"] + [
    f"i{n // 3},r{n % 3},{('cat', 'dog')[n % 2]},2024-05-01T10:{n:02d}:00Z" for n in range(18)
]
KEYED = ["item,rater,label,key"] + [f"i{n // 3},r{n % 3},cat,k{n}" for n in range(18)]
PLAIN = ["item,rater,label"] + [f"i{n // 3},r{n % 3},cat" for n in range(18)]


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


def _file(tmp_path: Path, lines: list[str], name: str = "labels.csv") -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _labels(engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM labels")).scalar_one())


def _imports(cli) -> list[dict]:
    result = cli("imports", "list", "pets", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("lines", [TIMED, KEYED], ids=["labeled_at", "keys"])
def test_identified_rows_reimport_as_duplicates(cli, engine, tmp_path, lines) -> None:
    path = _file(tmp_path, lines)
    first = cli("import", "pets", path)
    assert first.exit_code == 0, first.stderr
    assert "18 inserted, 0 duplicates" in first.stdout
    second = cli("import", "pets", path)
    assert second.exit_code == 0, second.stderr
    assert "0 inserted, 18 duplicates" in second.stdout
    assert _labels(engine) == 18
    records = _imports(cli)
    assert [(r["inserted"], r["duplicates"], r["source"]) for r in records] == [
        (18, 0, "labels.csv"),
        (0, 18, "labels.csv"),
    ]
    assert all(r["created_by"] == "cli" and r["created_at"] for r in records)


def test_unidentified_file_is_refused_the_second_time_unless_again(cli, engine, tmp_path) -> None:
    path = _file(tmp_path, PLAIN)
    assert cli("import", "pets", path).exit_code == 0
    first_id = _imports(cli)[0]["id"]
    refused = cli("import", "pets", path)
    assert refused.exit_code == 1
    assert f"same content as import {first_id}" in refused.stderr
    assert "--again" in refused.stderr
    assert _labels(engine) == 18 and len(_imports(cli)) == 1  # nothing written, not recorded
    # The same rows with other bytes (CRLF line endings, a BOM, a semicolon, another column
    # order) are the same content: the hash is of the parsed rows, not of the file.
    for variant in (
        "\r\n".join(PLAIN) + "\r\n",
        "\ufeff" + "\n".join(line.replace(",", ";") for line in PLAIN) + "\n",
        "\n".join(",".join(reversed(line.split(","))) for line in PLAIN) + "\n",
    ):
        other = tmp_path / "other.csv"
        other.write_text(variant, encoding="utf-8", newline="")
        refused = cli("import", "pets", str(other))
        assert refused.exit_code == 1 and f"same content as import {first_id}" in refused.stderr
    assert _labels(engine) == 18
    again = cli("import", "pets", path, "--again")
    assert again.exit_code == 0, again.stderr
    assert _labels(engine) == 36


def _flip(line: str) -> str:
    item, rater, label, at = line.split(",")
    return ",".join((item, rater, "dog" if label == "cat" else "cat", at))


def test_same_identity_with_another_label_is_a_conflict_naming_the_row(
    cli, engine, tmp_path
) -> None:
    assert cli("import", "pets", _file(tmp_path, TIMED)).exit_code == 0
    changed = list(TIMED)
    changed[5] = _flip(changed[5])  # file line 6
    result = cli("import", "pets", _file(tmp_path, changed, "changed.csv"))
    assert result.exit_code == 1
    assert "row 6, field 'label'" in result.stderr
    # no import id in the message: the API shares it, and ids there are opaque
    assert "conflicts with a stored label of the same item" in result.stderr
    assert "(import" not in result.stderr
    assert _labels(engine) == 18
    # Within one file: the second row of an identity with another label names the first.
    inside = [*TIMED[:3], _flip(TIMED[2])]
    result = cli("import", "pets", _file(tmp_path, inside, "inside.csv"))
    assert result.exit_code == 1
    assert "row 4, field 'label'" in result.stderr and "in row 3" in result.stderr
    assert _labels(engine) == 18
    assert len(_imports(cli)) == 1  # a rejected file leaves no import record either


def test_revert_deletes_that_import_only_and_once(cli, engine, tmp_path) -> None:
    assert cli("import", "pets", _file(tmp_path, TIMED)).exit_code == 0
    later = [line.replace("2024-05-01", "2024-05-02") for line in TIMED]
    assert cli("import", "pets", _file(tmp_path, later, "later.csv")).exit_code == 0
    first_id, second_id = (r["id"] for r in _imports(cli))
    assert _labels(engine) == 36

    refused = cli("imports", "revert", "pets", str(first_id))  # not a terminal, no --yes
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert _labels(engine) == 36

    done = cli("imports", "revert", "pets", str(first_id), "--yes")
    assert done.exit_code == 0, done.stderr
    assert "18 label(s) deleted" in done.stdout
    with engine.connect() as connection:
        left = connection.execute(text("SELECT DISTINCT import_id FROM labels")).scalars().all()
    assert left == [second_id] and _labels(engine) == 18

    shown = json.loads(cli("imports", "show", "pets", str(first_id), "--json").stdout)
    assert shown["reverted_labels"] == 18 and shown["reverted_at"] is not None
    twice = cli("imports", "revert", "pets", str(first_id), "--yes")
    assert twice.exit_code == 1 and "already reverted" in twice.stderr
    missing = cli("imports", "revert", "pets", "999", "--yes")
    assert missing.exit_code == 1 and "no import 999" in missing.stderr
    # A reverted file may come again: the refusal only counts imports still in force.
    assert cli("import", "pets", _file(tmp_path, TIMED)).exit_code == 0
    assert _labels(engine) == 36


def test_api_batches_follow_the_identity_rule_and_are_recorded(uow, engine, cli) -> None:
    rows = [
        {"item": "a", "rater": "ann", "label": "cat", "labeled_at": "2024-05-01T10:00:00Z"},
        {"item": "b", "rater": "ann", "label": "dog", "labeled_at": "2024-05-01T10:01:00Z"},
    ]
    first = ingest_labels(uow, "pets", rows, created_by="key 7")
    assert (first.inserted, first.duplicates) == (2, 0)
    again = ingest_labels(uow, "pets", rows, created_by="key 7")
    assert (again.inserted, again.duplicates) == (0, 2)
    with pytest.raises(IngestRejected) as caught:
        ingest_labels(uow, "pets", [{**rows[1], "label": "cat"}])
    assert [(e.row, e.field) for e in caught.value.errors] == [(1, "label")]
    records = _imports(cli)
    assert [(r["source"], r["created_by"], r["inserted"]) for r in records] == [
        ("api", "key 7", 2),
        ("api", "key 7", 0),
    ]
    assert records[0]["id"] == first.import_id


def test_repeats_across_batches_of_one_file(uow, engine, tmp_path) -> None:
    """Batches of 2 rows: a repeat in a later batch is judged like one in the same batch
    (PostgreSQL judges them in the staging pass, SQLite against the rows already written)."""
    from auditor.ingestion.readers import LabelFileReader
    from auditor.services.ingest.labels import import_batches

    create_project(uow, "pets", ["cat", "dog"])
    lines = [
        "item,rater,label,labeled_at,key,rater_kind",
        "a,ann,cat,2024-05-01T10:00:00Z,,",
        "b,ann,cat,,k1,",
        "c,bot,dog,,,model",
        "a,ann,cat,2024-05-01T10:00:00Z,,",  # line 5: duplicate of line 2
        "b,ann,cat,,k1,",  # line 6: duplicate of line 3's key
    ]
    path = Path(_file(tmp_path, lines))
    result = import_batches(uow, "pets", LabelFileReader(path, batch_size=2))
    assert (result.inserted, result.duplicates, result.rejected) == (3, 2, False)
    # Each kind of repeat with other content, in a later batch than the row it contradicts.
    for extra, field in [
        ("a,ann,dog,2024-05-01T10:00:00Z,,", "label"),  # same identity, other label
        ("x,ann,dog,,k1,", "key"),  # key k1 with other content
        ("d,bot,cat,,,human", "rater_kind"),  # bot is a model (line 4)
    ]:
        path = Path(_file(tmp_path, [*lines[:4], extra], f"bad-{field}.csv"))
        result = import_batches(uow, "pets", LabelFileReader(path, batch_size=2))
        assert result.rejected and result.inserted == 0
        assert [(e.row, e.field) for e in result.errors] == [(5, field)]
    assert _labels(engine) == 3


def _cumulative_counts(engine) -> list[int]:
    """project_label_count of every cumulative snapshot, oldest first."""
    query = text("SELECT project_label_count FROM snapshots WHERE scope = 'cumulative' ORDER BY id")
    with engine.connect() as connection:
        return [int(n) for n in connection.execute(query).scalars()]


def test_the_recompute_after_a_revert_sees_it_and_force_always_writes(
    cli, engine, tmp_path
) -> None:
    """In one tick (a minute): a recompute, a revert, a recompute writes a snapshot without
    the reverted labels (a new tick: snapshots are unique per (project, scope, tick)); once
    written, nothing more to write unless --force, which writes one regardless."""
    assert cli("import", "pets", _file(tmp_path, TIMED)).exit_code == 0
    assert cli("import", "pets", _file(tmp_path, KEYED, "more.csv")).exit_code == 0
    assert cli("recompute", "pets").exit_code == 0
    assert _cumulative_counts(engine) == [36]
    second_id = _imports(cli)[1]["id"]
    assert cli("imports", "revert", "pets", str(second_id), "--yes").exit_code == 0

    after = cli("recompute", "pets")
    assert after.exit_code == 0, after.stderr
    assert "wrote cumulative (18 labels)" in after.stdout, after.stdout
    assert _cumulative_counts(engine) == [36, 18]

    again = cli("recompute", "pets")
    assert "nothing changed since the latest snapshot" in again.stdout, again.stdout
    forced = cli("recompute", "pets", "--force")
    assert "wrote cumulative (18 labels)" in forced.stdout, forced.stdout
    assert _cumulative_counts(engine) == [36, 18, 18]


def test_history_table_marks_each_revert_where_it_happened(cli, tmp_path) -> None:
    assert cli("import", "pets", _file(tmp_path, TIMED)).exit_code == 0
    later = [line.replace("2024-05-01", "2024-05-02") for line in TIMED]
    assert cli("import", "pets", _file(tmp_path, later, "later.csv")).exit_code == 0
    assert "wrote" in cli("recompute", "pets").stdout
    first_id, second_id = (r["id"] for r in _imports(cli))
    for import_id in (second_id, first_id):
        assert cli("imports", "revert", "pets", str(import_id), "--yes").exit_code == 0
        done = cli("recompute", "pets")
        assert done.exit_code == 0 and "wrote cumulative" in done.stdout, done.stdout
    assert "every label was deleted" in done.stdout
    shown = cli("history", "pets", "--metric", "kappa_s", "--scope", "cumulative")
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert [line.split()[0][:2] for line in lines[1:]] == ["20", "--", "20", "--", "20"]
    assert lines[2].endswith(f"import {second_id} (later.csv) reverted: 18 label(s) removed")
    assert lines[4].endswith(f"import {first_id} (labels.csv) reverted: 18 label(s) removed")
    assert lines[5].endswith("no labels")
    # JSON and CSV keep their shape: one record per snapshot
    as_json = cli(
        "history", "pets", "--metric", "kappa_s", "--scope", "cumulative", "--format", "json"
    )
    assert len(json.loads(as_json.stdout)) == 3


def test_an_explicit_recompute_after_new_labels_in_the_same_tick_includes_them(
    cli, engine, tmp_path
) -> None:
    """issue 27: import, recompute, import more within the same minute, recompute: the second
    recompute writes a snapshot with the new labels (at the next free tick), says so first,
    and "nothing changed" is said only when nothing did."""
    assert cli("import", "pets", _file(tmp_path, TIMED)).exit_code == 0
    first = cli("recompute", "pets")
    assert first.stdout.startswith("recomputed pets at tick "), first.stdout
    assert cli("import", "pets", _file(tmp_path, KEYED, "more.csv")).exit_code == 0
    second = cli("recompute", "pets")
    assert second.exit_code == 0, second.stderr
    assert second.stdout.startswith("recomputed pets at tick "), second.stdout
    assert "wrote cumulative (36 labels)" in second.stdout, second.stdout
    assert _cumulative_counts(engine) == [18, 36]
    third = cli("recompute", "pets")
    assert third.stdout.startswith("pets: nothing changed since the latest snapshot"), third.stdout
    assert _cumulative_counts(engine) == [18, 36]
