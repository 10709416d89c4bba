"""Reverting an import un-fulfils the planned repeats its labels fulfilled (issue 13 item 2).

In the revert's own transaction, a fulfilled repeat whose fulfilling label is gone becomes what
it would be had that label never come: fulfilled by the rater's next remaining label on the
item received while it was open; else open again until it expires; else expired (its time
passed, or the rater has a newer open repeat of the item). `auditor repeats status` and the
API's repeat view show it, even for a rater left with no labels.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from auditor.domain import to_micros
from auditor.services.ingest.imports import list_imports, revert_import
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.repeats.planner import plan_repeats, repeat_status, update_repeat_settings

NOW = datetime.now(UTC)
START = NOW - timedelta(days=1)


def _rows(items: list[int], at: datetime) -> list[dict]:
    return [
        {
            "item": f"i{k}",
            "rater": "r1",
            "label": "ab"[k % 2],
            "labeled_at": at + timedelta(seconds=k),
        }
        for k in items
    ]


def _ingest(uow, rows: list[dict]) -> int:
    """Ingest ``rows`` into project p; the id of the import it recorded."""
    import_id = ingest_labels(uow, "p", rows).import_id
    assert import_id is not None
    return import_id


def _repeats(uow) -> dict[str, list[tuple[str, int | None]]]:
    """{item: [(status, fulfilling label's import id), ...]} oldest plan first."""
    with uow:
        rows = uow.session_for_tests.execute(
            text(
                "SELECT i.external_id, r.status, l.import_id FROM planned_repeats r "
                "JOIN items i ON i.id = r.item_id "
                "LEFT JOIN labels l ON l.id = r.fulfilled_label_id ORDER BY r.id"
            )
        ).all()
    found: dict[str, list[tuple[str, int | None]]] = {}
    for item, status, import_id in rows:
        found.setdefault(item, []).append((status, import_id))
    return found


def _sql(uow, statement: str, **params: object) -> None:
    with uow:
        uow.session_for_tests.execute(text(statement), params)
        uow.commit()


def test_revert_reopens_expires_or_refulfils_what_its_labels_fulfilled(
    uow, monkeypatch, database_url
) -> None:
    create_project(uow, "p", ["a", "b"])
    update_repeat_settings(uow, "p", share=1.0, min_gap_items=0, min_gap_hours=1)
    first = _ingest(uow, _rows(list(range(6)), START))
    plan = plan_repeats(uow, "p", "r1", 6)
    assert len(plan["items"]) == 6
    # B: the rater sees i0..i3 again (fulfils 4); C: she sees i2 once more (fulfils nothing)
    second = _ingest(uow, _rows([0, 1, 2, 3], NOW - timedelta(hours=1)))
    third = _ingest(uow, _rows([2], NOW - timedelta(minutes=30)))
    assert [s for rows in _repeats(uow).values() for s, _ in rows].count("fulfilled") == 4
    # i0's repeat ran out of time since; i1 was planned again after its fulfilment
    _sql(
        uow,
        "UPDATE planned_repeats SET expires_at = :past WHERE item_id = "
        "(SELECT id FROM items WHERE external_id = 'i0')",
        past=to_micros(NOW - timedelta(minutes=1)),
    )
    _sql(
        uow,
        "INSERT INTO planned_repeats (project_id, rater_id, item_id, first_labeled_at, "
        "planned_at, expires_at, reason, status) SELECT project_id, rater_id, item_id, "
        "first_labeled_at, :now, :later, 'stratified', 'open' FROM planned_repeats "
        "WHERE item_id = (SELECT id FROM items WHERE external_id = 'i1')",
        now=to_micros(NOW),
        later=to_micros(NOW + timedelta(days=7)),
    )

    result = revert_import(uow, "p", second)
    assert _repeats(uow) == {
        "i0": [("expired", None)],
        "i1": [("expired", None), ("open", None)],
        "i2": [("fulfilled", third)],  # C's label would have fulfilled it
        "i3": [("open", None)],
        "i4": [("open", None)],
        "i5": [("open", None)],
    }
    undone = result.repeats
    assert (undone.reopened, undone.expired, undone.refulfilled) == (1, 2, 1)
    (r1,) = repeat_status(uow, "p")
    assert (r1.planned, r1.fulfilled, r1.expired, r1.outstanding) == (7, 1, 2, 4)
    # The planner's view (the API's GET .../raters/r1/repeats?limit=0 answers the same)
    assert plan_repeats(uow, "p", "r1", 0)["outstanding"] == 4

    # A repeat open again is fulfilled again by her next look.
    ingest_labels(uow, "p", _rows([3], NOW))
    assert _repeats(uow)["i3"][0][0] == "fulfilled"

    # Every import reverted: the rater has no label left, her repeats still show.
    for import_id in (third, first):
        revert_import(uow, "p", import_id)
    (last,) = [r.id for r in list_imports(uow, "p") if r.reverted_at is None]
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        done = CliRunner().invoke(app, ["imports", "revert", "p", str(last), "--yes"])
        assert done.exit_code == 0, done.output
        assert "1 planned repeat(s) these labels fulfilled: 1 open again" in done.stdout
        assert _repeats(uow)["i2"] == [("open", None)] and _repeats(uow)["i3"] == [("open", None)]
        (r1,) = repeat_status(uow, "p")
        assert (r1.rater, r1.have, r1.fulfilled, r1.outstanding) == ("r1", 0, 0, 5)
        shown = CliRunner().invoke(app, ["repeats", "status", "p"])
        assert shown.exit_code == 0, shown.output
        assert shown.stdout.splitlines()[1].split()[:5] == ["r1", "7", "0", "2", "5"]
    finally:
        get_settings.cache_clear()


def test_a_revert_that_fulfilled_nothing_changes_no_repeat(uow, monkeypatch, database_url) -> None:
    create_project(uow, "p", ["a", "b"])
    update_repeat_settings(uow, "p", share=1.0, min_gap_items=0, min_gap_hours=1)
    ingest_labels(uow, "p", _rows(list(range(4)), START))
    plan_repeats(uow, "p", "r1", 2)
    other = _ingest(uow, _rows([10, 11], NOW))  # new items only
    before = _repeats(uow)
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        done = CliRunner().invoke(app, ["imports", "revert", "p", str(other), "--yes"])
    finally:
        get_settings.cache_clear()
    assert done.exit_code == 0, done.output
    assert "planned repeat" not in done.stdout
    assert _repeats(uow) == before
    assert [row for rows in before.values() for row in rows] == [("open", None)] * 2
