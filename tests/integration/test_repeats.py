"""The repeat planner on a real database (SQLite and PostgreSQL): eligibility (gaps in time and
in items, no open duplicates, items already repeated last, stratification), fulfilment from the
service, file-import and HTTP routes, expiry, the same request_id, limit=0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from auditor.errors import NotFound
from auditor.ingestion.readers import LabelFileReader
from auditor.services.ingest.labels import import_batches, ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.repeats.planner import plan_repeats, repeat_status, update_repeat_settings

CATEGORIES = ["a", "b", "c"]
T0 = datetime(2024, 5, 1, 8, tzinfo=UTC)


def _project(uow, slug: str = "p", **settings) -> None:
    create_project(uow, slug, CATEGORIES)
    if settings:
        update_repeat_settings(uow, slug, **settings)


def _label(item: str, rater: str, at: datetime, label: str = "a") -> dict:
    return {"item": item, "rater": rater, "label": label, "labeled_at": at}


def _statuses(uow) -> list[tuple[str, str]]:
    with uow:
        rows = uow.session_for_tests.execute(
            text(
                "SELECT i.external_id, r.status FROM planned_repeats r "
                "JOIN items i ON i.id = r.item_id ORDER BY r.id"
            )
        ).all()
    return [(item, status) for item, status in rows]


def test_only_items_past_both_gaps_are_planned(uow) -> None:
    """Only items at least 24 h old with at least 20 of the rater's labels after them."""
    _project(uow, share=1.0)
    rows = [_label(f"i{k:02d}", "r1", T0 + timedelta(hours=k)) for k in range(40)]
    ingest_labels(uow, "p", rows)
    now = T0 + timedelta(hours=40)
    # time gap: item k is (40 - k) h old, >= 24 h for k <= 16; item gap: 39 - k labels after
    # it, >= 20 for k <= 19. Both: k <= 16.
    plan = plan_repeats(uow, "p", "r1", 100, now=now)
    assert sorted(entry["item"] for entry in plan["items"]) == [f"i{k:02d}" for k in range(17)]
    first = {e["item"]: e["first_labeled_at"] for e in plan["items"]}
    assert first["i03"] == (T0 + timedelta(hours=3)).isoformat()

    # the item gap binds: 40 items a minute apart, a day later; only k <= 19 qualify
    ingest_labels(
        uow, "p", [_label(f"j{k:02d}", "r2", T0 + timedelta(minutes=k)) for k in range(40)]
    )
    plan = plan_repeats(uow, "p", "r2", 100, now=T0 + timedelta(days=2))
    assert sorted(entry["item"] for entry in plan["items"]) == [f"j{k:02d}" for k in range(20)]


def test_no_open_duplicates_and_repeated_items_come_last(uow) -> None:
    _project(uow, share=1.0, min_gap_items=0, min_gap_hours=1)
    ingest_labels(uow, "p", [_label(f"i{k}", "r1", T0 + timedelta(minutes=k)) for k in range(10)])
    now = T0 + timedelta(hours=2)
    first = {e["item"] for e in plan_repeats(uow, "p", "r1", 6, now=now)["items"]}
    second = {e["item"] for e in plan_repeats(uow, "p", "r1", 100, now=now)["items"]}
    assert len(first) == 6
    assert second == {f"i{k}" for k in range(10)} - first  # the open ones are not planned again
    assert plan_repeats(uow, "p", "r1", 100, now=now)["items"] == []
    # the rater sees i0..i4 again: those are repeated; with nothing open the fresh ones come first
    later = T0 + timedelta(hours=3)
    ingest_labels(uow, "p", [_label(f"i{k}", "r1", later) for k in range(10)], received_at=later)
    ingest_labels(uow, "p", [_label(f"n{k}", "r1", later + timedelta(seconds=k)) for k in range(3)])
    update_repeat_settings(uow, "p", share=1.0)
    plan = plan_repeats(uow, "p", "r1", 5, now=later + timedelta(hours=2))
    items = [e["item"] for e in plan["items"]]
    assert items[:3] and set(items[:3]) == {"n0", "n1", "n2"}
    assert all("no unrepeated item is eligible" in e["reason"] for e in plan["items"][3:])


def test_stratified_by_the_category_the_rater_gave(uow) -> None:
    """600 items labeled a, 300 b, 100 c: 100 repeats split about 60 / 30 / 10 (a random pick
    would often leave c with 5 or fewer); with a rare category used 3 times in 1000, it still
    gets a repeat."""
    _project(uow, share=0.1, min_gap_items=0, min_gap_hours=0)
    labels = ["a"] * 600 + ["b"] * 300 + ["c"] * 100
    rows = [_label(f"i{k}", "r1", T0 + timedelta(seconds=k), g) for k, g in enumerate(labels)]
    ingest_labels(uow, "p", rows)
    plan = plan_repeats(uow, "p", "r1", 1000, now=T0 + timedelta(days=1), seed=1)
    given = {f"i{k}": g for k, g in enumerate(labels)}
    counts = {c: sum(given[e["item"]] == c for e in plan["items"]) for c in CATEGORIES}
    assert sum(counts.values()) == 100
    assert abs(counts["a"] - 60) <= 1 and abs(counts["b"] - 30) <= 1 and abs(counts["c"] - 10) <= 1


def test_fulfilled_from_the_service_the_import_and_the_api(uow, tmp_path, engine) -> None:
    from fastapi.testclient import TestClient

    from auditor.api import create_app
    from auditor.config import Settings
    from auditor.services.access.keys import create_key

    _project(uow, share=1.0, min_gap_items=0, min_gap_hours=1)
    # the import and the API stamp labels with the wall clock: plan on it too
    start = datetime.now(UTC) - timedelta(days=1)
    ingest_labels(uow, "p", [_label(f"i{k}", "r1", start + timedelta(minutes=k)) for k in range(6)])
    plan = plan_repeats(uow, "p", "r1", 3, now=start + timedelta(hours=2))
    a, b, c = (e["item"] for e in plan["items"])
    assert _statuses(uow) == [(a, "open"), (b, "open"), (c, "open")]
    later = start + timedelta(hours=3)
    # another rater's label on the item does not fulfil r1's repeat
    ingest_labels(uow, "p", [_label(a, "r2", later)], received_at=later)
    assert _statuses(uow)[0] == (a, "open")
    ingest_labels(uow, "p", [_label(a, "r1", later)], received_at=later)
    path = tmp_path / "more.csv"
    path.write_text(f"item,rater,label,labeled_at\n{b},r1,b,{later.isoformat()}\n")
    assert not import_batches(uow, "p", LabelFileReader(path, batch_size=100)).rejected
    key = create_key(uow, "p", "ingest")[1]
    url = str(engine.url.render_as_string(hide_password=False))
    app = create_app(Settings(database_url=url, broker_url=None))  # type: ignore[arg-type]
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {key}"}
        response = client.post(
            "/api/v1/projects/p/label", json={"item": c, "rater": "r1", "label": "c"},
            headers=headers,
        )  # fmt: skip
        assert response.status_code == 200, response.text
        counts = client.get("/api/v1/projects/p/raters/r1/repeats?limit=0", headers=headers)
    assert _statuses(uow) == [(a, "fulfilled"), (b, "fulfilled"), (c, "fulfilled")]
    # SA = 1/3 on 3 repeats (a kept, b and c changed): centre (1 + z^2/2) / (3 + z^2) = 0.427,
    # needed = ceil(1 + z^2 0.427 (1 - 0.427) / 0.1^2) = 95
    assert counts.json() == {"rater": "r1", "items": [], "needed": 95, "have": 3, "outstanding": 0}
    status = {s.rater: s for s in repeat_status(uow, "p")}
    assert (status["r1"].planned, status["r1"].fulfilled, status["r1"].outstanding) == (3, 3, 0)


def test_expired_repeats_are_not_fulfilled_and_may_be_planned_again(uow) -> None:
    _project(uow, share=1.0, min_gap_items=0, min_gap_hours=1, open_days=7)
    ingest_labels(uow, "p", [_label("i0", "r1", T0), _label("i1", "r1", T0)])
    planned_at = T0 + timedelta(hours=2)
    first = [e["item"] for e in plan_repeats(uow, "p", "r1", 1, now=planned_at)["items"]]
    late = planned_at + timedelta(days=7, seconds=1)
    status = {s.rater: s for s in repeat_status(uow, "p", now=late)}
    assert (status["r1"].planned, status["r1"].expired, status["r1"].outstanding) == (1, 1, 0)
    # past its time the repeat is open no longer: planned again, with the other item
    again = plan_repeats(uow, "p", "r1", 5, now=late)
    assert sorted(e["item"] for e in again["items"]) == ["i0", "i1"]
    assert [s for _, s in _statuses(uow)] == ["expired", "open", "open"]
    # a label after a repeat's time does not fulfil it
    after = late + timedelta(days=8)
    ingest_labels(uow, "p", [_label(first[0], "r1", after)], received_at=after)
    assert [s for _, s in _statuses(uow)] == ["expired", "open", "open"]
    status = {s.rater: s for s in repeat_status(uow, "p", now=after)}
    assert (status["r1"].fulfilled, status["r1"].expired, status["r1"].have) == (0, 3, 1)


def test_same_request_id_same_answer_and_limit_zero_only_counts(uow) -> None:
    _project(uow, share=1.0, min_gap_items=0, min_gap_hours=1)
    ingest_labels(uow, "p", [_label(f"i{k}", "r1", T0 + timedelta(minutes=k)) for k in range(20)])
    now = T0 + timedelta(hours=2)
    counts = plan_repeats(uow, "p", "r1", 0, now=now)
    assert counts == {"rater": "r1", "items": [], "needed": 98, "have": 0, "outstanding": 0}
    assert _statuses(uow) == []
    first = plan_repeats(uow, "p", "r1", 4, request_id="batch-17", now=now)
    again = plan_repeats(uow, "p", "r1", 4, request_id="batch-17", now=now + timedelta(hours=1))
    assert again == first and len(first["items"]) == 4 and first["outstanding"] == 4
    assert len(_statuses(uow)) == 4
    other = plan_repeats(uow, "p", "r1", 4, request_id="batch-18", now=now)
    assert not {e["item"] for e in other["items"]} & {e["item"] for e in first["items"]}
    with pytest.raises(NotFound, match="no rater 'nobody'"):
        plan_repeats(uow, "p", "nobody", 4)


def test_concurrent_plans_for_one_rater_never_share_an_item(uow, engine) -> None:
    """Eight threads plan for one rater at once (real connections): each item is planned once."""
    import threading

    from auditor.storage.unit_of_work import UnitOfWork

    _project(uow, share=1.0, min_gap_items=0, min_gap_hours=1)
    ingest_labels(uow, "p", [_label(f"i{k}", "r1", T0 + timedelta(seconds=k)) for k in range(80)])
    now = T0 + timedelta(hours=2)
    answers: list[dict] = []
    errors: list[BaseException] = []

    def plan() -> None:
        try:
            answers.append(plan_repeats(UnitOfWork(engine), "p", "r1", 10, now=now))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=plan) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    items = [e["item"] for answer in answers for e in answer["items"]]
    assert len(items) == 80 and len(set(items)) == 80
