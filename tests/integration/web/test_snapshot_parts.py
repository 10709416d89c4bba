"""The page reads of a snapshot of many raters (issue 22 item 2): its result without the pairs
is kept beside it (``lean``) and read instead of the whole; what the page gets is the same.
On both backends."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.engine import Engine

from auditor.services.projects.projects import create_project
from auditor.storage.snapshot_repository import LEAN_PAIRS
from auditor.storage.unit_of_work import UnitOfWork

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _snapshot(project_id: int, pairs: int) -> dict[str, object]:
    raters = {
        f"r{i}": {
            "s_vs_group": {"value": 0.5 + i / 100, "n": 10},
            "confusion": [[1.0, 0.0], [0.0, 1.0]],
            "confusion_n": [3, 4],
            "n_repeated_items": i,
        }
        for i in range(40)
    }
    result = {
        "measures": {"kappa_s": {"value": 0.7}},
        "raters": raters,
        "pairwise_cohen": [
            {"rater_a": "r0", "rater_b": f"x{i}", "kappa": {"value": 0.1}} for i in range(pairs)
        ],
    }
    return {
        "project_id": project_id, "scope": "cumulative", "tick": pairs, "computed_at": AT,
        "as_of": AT, "window_start": None, "window_end": None, "watermark": 1,
        "project_label_count": 1, "n_labels": 1, "n_items": 1, "n_raters": 40,
        "n_pairable_items": 1, "categories": ["a", "b"], "settings": {}, "code_version": "t",
        "seed": None, "interval_method": "jackknife", "interval_level": 0.95,
        "duration_ms": 1.0, "result": result,
    }  # fmt: skip


def test_many_pairs_are_left_out_of_the_page_reads(engine: Engine) -> None:
    create_project(UnitOfWork(engine), "p", ["a", "b"])
    for pairs in (LEAN_PAIRS, LEAN_PAIRS + 1):  # at the threshold: no copy; above: a copy
        with UnitOfWork(engine) as uow:
            project_id = uow.require_project("p").id
            snapshot = _snapshot(project_id, pairs)
            snapshot_id = uow.snapshots.insert_snapshot(snapshot, [])
            uow.commit()
        with engine.connect() as db:
            kept = db.execute(
                text("SELECT lean IS NOT NULL FROM snapshots WHERE id = :i"), {"i": snapshot_id}
            ).scalar()
        assert bool(kept) == (pairs > LEAN_PAIRS)
        result = snapshot["result"]
        assert isinstance(result, dict)
        expected = {k: v for k, v in result.items() if k != "pairwise_cohen"}
        with UnitOfWork(engine, read_only=True) as uow:
            without = uow.snapshots.snapshot_without_at(
                project_id, "cumulative", None, "pairwise_cohen"
            )
            whole = uow.snapshots.snapshot_at(project_id, "cumulative", None)
            parts = uow.snapshots.snapshot_parts_at(
                project_id, "cumulative", None, ("measures", "raters")
            )
        assert without is not None and without["result"] == expected
        assert "lean" not in without and whole is not None and "lean" not in whole
        assert whole["result"] == result
        assert parts is not None
        assert parts["result"] == {k: expected[k] for k in ("measures", "raters")}
