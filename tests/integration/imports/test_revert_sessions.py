"""A revert leaves no stale session behind: a session spans the labels it keeps (its
started_at/ended_at shrink back), and a session left without labels goes (sessions exist only
through their labels; the API's GET .../sessions would list it with the deleted span)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from auditor.domain import from_micros
from auditor.services.ingest.imports import revert_import
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project

T0 = datetime(2024, 5, 1, 10, tzinfo=UTC)


def _row(item: str, session: str, minutes: int) -> dict:
    at = T0 + timedelta(minutes=minutes)
    return {"item": item, "rater": "r1", "label": "cat", "session": session, "labeled_at": at}


def _sessions(engine) -> dict[str, tuple[datetime, datetime]]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT external_id, started_at, ended_at FROM sessions ORDER BY external_id")
        ).all()
    return {name: (from_micros(start), from_micros(end)) for name, start, end in rows}


def test_sessions_shrink_to_the_labels_they_keep(uow, engine) -> None:
    create_project(uow, "p", ["cat", "dog"])
    ingest_labels(uow, "p", [_row("a", "s1", 0), _row("b", "s1", 5), _row("c", "s3", 0)])
    later = ingest_labels(
        uow, "p", [_row("c", "s1", 120), _row("d", "s2", 180), _row("e", "s3", 1)]
    ).import_id
    assert later is not None
    minute = timedelta(minutes=1)
    assert _sessions(engine) == {
        "s1": (T0, T0 + 120 * minute),
        "s2": (T0 + 180 * minute, T0 + 180 * minute),
        "s3": (T0, T0 + minute),
    }
    revert_import(uow, "p", later)
    assert _sessions(engine) == {"s1": (T0, T0 + 5 * minute), "s3": (T0, T0)}
