"""Reads of an immutable snapshot's points kept per process (``snapshot_repository._IMMUTABLE``,
PostgreSQL only): a snapshot id used again after a deletion (tests reset the sequences) must
not be served the old snapshot's answer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from auditor.services.projects.projects import create_project
from auditor.storage.import_repository import ImportRepository
from auditor.storage.models import Project
from auditor.storage.snapshot_repository import SnapshotRepository
from auditor.storage.unit_of_work import UnitOfWork

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _snapshot(engine: Engine, slug: str, lowest: float) -> int:
    create_project(UnitOfWork(engine), slug, ["a", "b"])
    with Session(engine) as session, session.begin():
        project_id = session.execute(select(Project.id).where(Project.slug == slug)).scalar_one()
        row: dict[str, Any] = dict(
            project_id=project_id, scope="cumulative", tick=1, computed_at=AT, as_of=AT,
            window_start=None, window_end=None, watermark=1, project_label_count=1, n_labels=1,
            n_items=1, n_raters=3, n_pairable_items=1, categories=["a", "b"], settings={},
            code_version="test", seed=None, interval_method="jackknife", interval_level=0.95,
            duration_ms=1.0, result={},
        )  # fmt: skip
        pairs = [
            {"metric": "cohen_kappa", "subject_kind": "pair", "subject_id": subject,
             "value": value, "ci_low": None, "ci_high": None, "n": 50, "reason": None}
            for subject, value in (("a|b", lowest), ("a|c", 0.9), ("b|c", 0.8))
        ]  # fmt: skip
        snapshot_id = SnapshotRepository(session).insert_snapshot(row, pairs)
        assert snapshot_id is not None
        return snapshot_id


def test_a_reused_snapshot_id_is_not_served_the_old_answer(engine: Engine) -> None:
    first = _snapshot(engine, "one", 0.1)
    with Session(engine) as session:
        repository = SnapshotRepository(session)
        assert repository.weakest_pairs(first, "cohen_kappa", 1, 1)[0][0][1][0] == 0.1
        assert repository.weakest_pairs(first, "cohen_kappa", 1, 1)[0][0][1][0] == 0.1
    with Session(engine) as session, session.begin():
        project_id = session.execute(select(Project.id)).scalar_one()
        ImportRepository(session).delete_project(project_id)
        if engine.dialect.name == "postgresql":
            session.execute(text("SELECT setval('snapshots_id_seq', :id, false)"), {"id": first})
    second = _snapshot(engine, "two", 0.2)
    assert second == first  # the id is used again
    with Session(engine) as session:
        lowest, total = SnapshotRepository(session).weakest_pairs(second, "cohen_kappa", 1, 1)
    assert lowest[0][1][0] == 0.2 and total == 3
