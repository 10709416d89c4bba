"""docs/client.md's pipeline runs as printed against a real ``auditor serve``: an LLM judge's
two versions posted beside three human raters, then their S against the group read back per
version into a DataFrame. Run twice, it stores nothing the second time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.services.access.keys import create_key
from auditor.services.projects.projects import create_project
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import CATEGORIES

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
DOC = Path(__file__).resolve().parents[3] / "docs" / "client.md"


def example() -> str:
    found = re.search(r"<!-- example: llm-judge.*?-->\s*```python\n(.*?)```", DOC.read_text(), re.S)
    assert found, "docs/client.md has no block marked llm-judge"
    return found.group(1)


def shown_output() -> str:
    found = re.search(r"It prints:\n\n```\n(.*?)```", DOC.read_text(), re.S)
    assert found, "docs/client.md shows no output of the example"
    return found.group(1)


def test_the_llm_judge_pipeline_runs_as_printed(served, monkeypatch, capsys) -> None:
    engine = make_engine(served.database_url)
    try:
        create_project(UnitOfWork(engine), "llm-eval", CATEGORIES, recompute_interval_seconds=1)
        ingest = create_key(UnitOfWork(engine), "llm-eval", "ingest")[1]
        read = create_key(UnitOfWork(engine), "llm-eval", "read")[1]
    finally:
        engine.dispose()
    monkeypatch.setenv("AUDITOR_URL", served.base)
    monkeypatch.setenv("AUDITOR_INGEST_KEY", ingest)
    monkeypatch.setenv("AUDITOR_KEY", read)
    code = compile(example(), str(DOC), "exec")
    first: dict = {}
    exec(code, first)
    printed = capsys.readouterr().out
    lines = [line.rstrip() for line in printed.splitlines()]
    assert lines == [line.rstrip() for line in shown_output().splitlines()]  # as the page says
    per_version, latest = first["per_version"], first["latest"]
    assert list(per_version.index) == ["model:judge-v1", "model:judge-v2"]
    s = {version: latest.measure("s", f"model:{version}") for version in ("judge-v1", "judge-v2")}
    for version, measure in s.items():
        row = per_version.loc[f"model:{version}"]
        assert (row["value"], row["n"]) == (measure["value"], measure["n"]) and row["n"] == 60
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert s["judge-v2"]["value"] > s["judge-v1"]["value"]  # the better judge scores higher

    again: dict = {}
    exec(code, again)  # the pipeline run again: every batch replayed, nothing written twice
    assert "judge-v2: 60 labels stored; batches 1, of which 1 stored by an earlier run" in (
        capsys.readouterr().out
    )
    assert again["latest"].watermark == latest.watermark == 3 * 60 + 2 * 60
