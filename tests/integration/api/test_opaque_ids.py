"""What a project key sees carries no global sequence value: snapshot, session, silence,
evaluation, notification, key and label ids are opaque, the cursors still page, and the
watermark is the project's own label count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.services.alerts.silences import add_silence, list_silences
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

BASE = "/api/v1/projects/alpha"


def _get(world, path: str, **params: object) -> dict:
    answer = world.client.get(BASE + path, params=params, headers=world.auth())
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def _all_pages(world, path: str, key: str, cursor: str, answer_cursor: str) -> list[dict]:
    found: list[dict] = []
    params: dict[str, object] = {"limit": 1}
    while True:
        page = _get(world, path, **params)
        found += page[key]
        if page[answer_cursor] is None:
            return found
        params[cursor] = page[answer_cursor]


def test_snapshot_ids_are_opaque_page_and_resolve(world) -> None:
    listed = _get(world, "/snapshots")["snapshots"]
    assert listed and world.alpha_snapshot_id not in {s["id"] for s in listed}
    assert listed[0]["id"] == world.opaque("snapshot", "alpha", max(_alpha_snapshots(world)))
    assert [s["id"] for s in _all_pages(world, "/snapshots", "snapshots", "before",
                                        "next_before")] == [s["id"] for s in listed]  # fmt: skip
    labels = _get(world, "")["counts"]["labels"]
    for summary in listed:
        assert summary["watermark"] == labels  # the project's own label count, not a global id
        detail = _get(world, f"/snapshots/{summary['id']}")["snapshot"]
        assert (detail["id"], detail["scope"], detail["tick"]) == (
            summary["id"], summary["scope"], summary["tick"],
        )  # fmt: skip
    latest = _get(world, "/snapshots/latest")["snapshot"]
    assert latest["id"] in {s["id"] for s in listed} and latest["watermark"] == labels
    history = _get(world, "/history", metric="kappa_s")["points"]
    assert {p["snapshot_id"] for p in history} <= {s["id"] for s in listed}
    report = _get(world, "/raters/a1/report")
    assert report["snapshot_id"] in {s["id"] for s in listed}


def _alpha_snapshots(world) -> list[int]:
    from auditor.services.queries.project_reads import list_snapshots

    engine = make_engine(world.engine_url)
    try:
        return [r.id for r in list_snapshots(UnitOfWork(engine), "alpha", None, None, 1000)]
    finally:
        engine.dispose()


def test_another_tenants_activity_does_not_show_in_this_tenants_ids(world) -> None:
    """Beta makes 30 silences between two of alpha's: alpha's ids tell nothing of it."""
    ends = datetime.now(UTC) + timedelta(days=1)
    engine = make_engine(world.engine_url)
    try:
        for n in range(30):
            add_silence(UnitOfWork(engine), "beta", ends_at=ends, subject="project", reason=f"{n}")
        body = {"ends_at": ends.isoformat(), "subject": "project", "reason": "mine"}
        made = world.client.post(f"{BASE}/alerts/silences", json=body, headers=world.auth())
        assert made.status_code == 201, made.text
        shown = made.json()
        stored = [s.id for s in list_silences(UnitOfWork(engine), "alpha")]
    finally:
        engine.dispose()
    assert max(stored) - world.alpha_silence_id > 30  # the global sequence moved on ...
    assert shown["id"] == world.opaque("silence", "alpha", max(stored))  # ... alpha sees this
    assert shown["id"] not in stored
    ended = world.client.post(f"{BASE}/alerts/silences/{shown['id']}/end", headers=world.auth())
    assert ended.status_code == 204


def test_sessions_page_through_opaque_cursors(world) -> None:
    everything = _get(world, "/sessions", limit=1000)["sessions"]
    paged = _all_pages(world, "/sessions", "sessions", "after", "next_after")
    assert [s["id"] for s in paged] == [s["id"] for s in everything] and len(paged) >= 3


def test_ingest_answers_an_opaque_label_id(world) -> None:
    label = {"item": "opaque-1", "rater": "a1", "label": "normal"}
    answer = world.client.post(f"{BASE}/label", json=label, headers=world.auth())
    assert answer.status_code == 200, answer.text
    shown = answer.json()["max_label_id"]
    engine = make_engine(world.engine_url)
    try:
        with UnitOfWork(engine) as uow:
            from auditor.services.recompute.recompute import find_project_id

            project_id = find_project_id(UnitOfWork(engine), "alpha")
            newest = uow.labels.max_label_id(project_id)
    finally:
        engine.dispose()
    assert shown == world.opaque("label", "alpha", newest) and shown != newest


def test_a_served_snapshot_names_its_full_pass_by_the_opaque_id(world, monkeypatch) -> None:
    """A snapshot served from kept statistics says which full pass it carries parts from:
    by the id the key sees, not the global one."""
    from auditor.config import get_settings
    from auditor.services.ingest.labels import ingest_labels
    from auditor.services.recompute.recompute import find_project_id, recompute_project

    monkeypatch.setenv("AUDITOR_KEPT_SNAPSHOT_LABELS", "0")
    get_settings.cache_clear()
    engine = make_engine(world.engine_url)
    try:
        uow = UnitOfWork(engine)
        project_id = find_project_id(uow, "alpha")
        full = recompute_project(uow, project_id, force=True)  # a full pass of today's labels
        full_id = next(w.id for w in full.written if w.scope == "cumulative")
        at = datetime.now(UTC)
        rows = [
            {"item": f"late{i}", "rater": r, "label": "benign", "labeled_at": at}
            for i in range(3)
            for r in ("a1", "a2")
        ]
        ingest_labels(uow, "alpha", rows)
        served = recompute_project(uow, project_id)
        assert any("source" in w.rendered for w in served.written)
    finally:
        engine.dispose()
        get_settings.cache_clear()
    source = _get(world, "/snapshots/latest")["source"]
    assert source["statistics"] == "kept"
    assert source["full_pass"] == world.opaque("snapshot", "alpha", full_id) != full_id
