"""Two to four `auditor import` processes of one file into one project, started together on
PostgreSQL: exactly one writes the labels. The others wait for it and then find it: a file
that only its content identifies is refused naming the import that won; a file whose rows
labeled_at or keys identify is recognised row by row (all duplicates, nothing inserted).

Before the import lock, both runs of an unidentified file succeeded (rows x 2 labels)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from auditor.services.projects.projects import create_project

ROWS = 30_000


def _lines(kind: str) -> list[str]:
    if kind == "unidentified":
        head = "item,rater,label"
        rows = [f"i{n // 3},r{n % 3},{('cat', 'dog')[n % 2]}" for n in range(ROWS)]
    elif kind == "natural":
        head = "item,rater,label,labeled_at"
        rows = [
            f"i{n // 3},r{n % 3},{('cat', 'dog')[n % 2]},"
            f"2024-05-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
            for n in range(ROWS)
        ]
    else:
        head = "item,rater,label,key"
        rows = [f"i{n // 3},r{n % 3},{('cat', 'dog')[n % 2]},k{n}" for n in range(ROWS)]
    return [head, *rows]


def _start(url: str, path: Path) -> subprocess.Popen[str]:
    code = "import sys; from auditor.cli import main; sys.argv[0] = 'auditor'; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, "import", "pets", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"AUDITOR_DATABASE_URL": url, "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres)])
@pytest.mark.parametrize(("kind", "runs"), [("unidentified", 3), ("natural", 3), ("keyed", 4)])
def test_one_of_the_concurrent_imports_writes(
    database_url: str, uow, engine, tmp_path: Path, kind: str, runs: int
) -> None:
    create_project(uow, "pets", ["cat", "dog"])
    path = tmp_path / f"{kind}.csv"
    path.write_text("\n".join(_lines(kind)) + "\n")
    processes = [_start(database_url, path) for _ in range(runs)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in processes]

    with engine.connect() as connection:
        labels = connection.execute(text("SELECT count(*) FROM labels")).scalar_one()
        imports = (
            connection.execute(text("SELECT id FROM imports WHERE inserted > 0")).scalars().all()
        )
    assert labels == ROWS, results
    assert len(imports) == 1, results
    winner = imports[0]
    for code, out, err in results:
        assert "Traceback" not in err
        written = re.search(r"(\d+) inserted, (\d+) duplicates", out)
        if written and int(written.group(1)) == ROWS:
            assert code == 0
        elif kind == "unidentified":  # refused, naming the import that won
            assert code != 0, (out, err)
            assert f"same content as import {winner}" in out + err
        else:  # waited, then found every row stored
            assert code == 0, (out, err)
            assert written is not None and written.groups() == ("0", str(ROWS)), (out, err)
