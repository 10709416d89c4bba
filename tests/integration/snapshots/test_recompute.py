"""The recompute service on SQLite and PostgreSQL: dirty tracking, atomic snapshots, queries."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import text

from auditor.domain import ProjectSettings
from auditor.errors import Invalid, NotFound
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.history import metric_history, snapshot_view
from auditor.services.recompute import recompute as audit
from auditor.services.recompute.recompute import (
    find_project_id,
    recompute_project,
    scan_dirty_projects,
)
from auditor.stats import compute_measures
from auditor.stats.export import measure_set_to_dict
from auditor.storage.label_loader import load_project_labels

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
CATEGORIES = ["yes", "no", "maybe"]


def _rows(n_items: int, raters: list[str], start: datetime, seed: int = 0, prefix: str = "i"):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        truth = int(rng.integers(3))
        for k, rater in enumerate(raters):
            label = truth if rng.random() < 0.8 else int(rng.integers(3))
            rows.append(
                {
                    "item": f"{prefix}{i}",
                    "rater": rater,
                    "label": CATEGORIES[label],
                    "labeled_at": start + timedelta(minutes=i, seconds=k),
                    "rater_kind": "model" if rater.startswith("m") else "human",
                }
            )
    return rows


@pytest.fixture
def project(uow) -> int:
    create_project(uow, "p", CATEGORIES, windows_days=(7,), recompute_interval_seconds=60)
    return find_project_id(uow, "p")


def _counts(engine) -> tuple[int, int]:
    with engine.connect() as c:
        return (
            int(c.execute(text("SELECT count(*) FROM snapshots")).scalar_one()),
            int(c.execute(text("SELECT count(*) FROM metric_points")).scalar_one()),
        )


def test_first_recompute_writes_both_scopes_with_points_matching_the_stats(uow, engine, project):
    ingest_labels(uow, "p", _rows(30, ["a", "b", "c", "m1"], T0))
    now = T0 + timedelta(hours=2)
    result = recompute_project(uow, project, now=now)
    assert result.status == "written"
    assert sorted(w.scope for w in result.written) == ["7d", "cumulative"]

    view = snapshot_view(uow, "p")
    loaded = load_project_labels(engine, project)
    expected = measure_set_to_dict(
        compute_measures(
            loaded.labels, ProjectSettings(windows_days=(7,), recompute_interval_seconds=60)
        )
    )
    assert {k: v for k, v in view.items() if k != "snapshot"} == expected
    meta = view["snapshot"]
    assert meta["watermark"] == loaded.watermark and meta["project_label_count"] == 120
    assert meta["tick"] == int(now.timestamp()) // 60
    assert meta["settings"]["windows_days"] == [7]
    assert meta["settings"]["rater_model"] == "moments"  # history says which model made it

    kappa = metric_history(uow, "p", "kappa_s", scopes=["cumulative"])
    assert [p.value for p in kappa] == [expected["measures"]["kappa_s"]["value"]]
    model = metric_history(uow, "p", "kappa_va", subject="model:m1")
    assert len(model) == 2 and model[0].value == expected["models"]["m1"]["kappa_va"]["value"]
    pair = metric_history(uow, "p", "cohen_kappa", subject="pair:a|b", scopes=["cumulative"])
    assert pair[0].n == 30


def test_nothing_written_when_not_dirty_and_one_snapshot_per_tick(uow, engine, project):
    ingest_labels(uow, "p", _rows(10, ["a", "b"], T0))
    now = T0 + timedelta(hours=1)
    first = recompute_project(uow, project, now=now)
    assert first.status == "written"
    before = _counts(engine)
    # same tick, new labels: the scan's recompute (its tick pinned) keeps one snapshot per tick
    ingest_labels(uow, "p", _rows(5, ["a", "b"], T0, prefix="j"))
    soon = now + timedelta(seconds=1)
    pinned = recompute_project(uow, project, now=soon, tick=first.tick)
    assert pinned.status == "not_dirty"
    assert _counts(engine) == before
    # next tick: new labels make both scopes dirty
    later = now + timedelta(minutes=1)
    assert [d.project_id for d in scan_dirty_projects(uow, later)] == [project]
    # issue 27: an explicit recompute does not wait for it: it writes the new labels now, at
    # the next free tick (and the scan then has nothing left to do)
    result = recompute_project(uow, project, now=soon)
    assert result.tick == first.tick + 1
    assert sorted(w.scope for w in result.written) == ["7d", "cumulative"]
    assert {w.n_labels for w in result.written} == {30}
    # nothing new, window did not pass over labels: nothing written, scan finds nothing
    again = later + timedelta(minutes=5)
    assert scan_dirty_projects(uow, again) == []
    assert recompute_project(uow, project, now=again).status == "not_dirty"
    assert _counts(engine)[0] == 4


def test_window_moving_over_labels_recomputes_only_the_window(uow, engine, project):
    ingest_labels(uow, "p", _rows(10, ["a", "b"], T0))
    recompute_project(uow, project, now=T0 + timedelta(hours=1))
    # eight days later the labels have left the 7-day window
    later = T0 + timedelta(days=8)
    result = recompute_project(uow, project, now=later)
    assert [(w.scope, w.n_labels) for w in result.written] == [("7d", 0)]
    window = snapshot_view(uow, "p", scope="7d")
    assert window["measures"]["kappa_s"]["value"] is None
    assert window["measures"]["kappa_s"]["reason"]
    # the empty window does not change when it moves on
    assert recompute_project(uow, project, now=later + timedelta(days=1)).status == "not_dirty"


def test_a_label_committed_below_the_watermark_is_still_seen(uow, engine, project, backend):
    """Ids are handed out at insert, commits can land out of order: the count catches it."""
    ingest_labels(uow, "p", _rows(10, ["a", "b"], T0))
    recompute_project(uow, project, now=T0 + timedelta(hours=1))
    with engine.begin() as c:
        low = c.execute(text("SELECT min(id) FROM labels")).scalar_one()
        c.execute(text("DELETE FROM labels WHERE id = :id"), {"id": low})
        c.execute(
            text(
                "INSERT INTO labels (id, project_id, item_id, rater_id, category_id, labeled_at,"
                " received_at) SELECT :id, project_id, item_id, rater_id, category_id,"
                " labeled_at, received_at FROM labels WHERE id = :other"
            ),
            {"id": low, "other": low + 1},
        )
        # net effect so far: same count; add one more label below the watermark
        c.execute(text("UPDATE labels SET id = id + 1000 WHERE id = (SELECT max(id) FROM labels)"))
    # max id moved: dirty by watermark
    assert scan_dirty_projects(uow, T0 + timedelta(hours=2))
    recompute_project(uow, project, now=T0 + timedelta(hours=2))
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO labels (id, project_id, item_id, rater_id, category_id, labeled_at,"
                " received_at) SELECT 5000000, project_id, item_id, rater_id, category_id,"
                " labeled_at, received_at FROM labels WHERE id = :id"
            ),
            {"id": low},
        )
        c.execute(text("UPDATE labels SET id = 500 WHERE id = 5000000"))
    dirty = scan_dirty_projects(uow, T0 + timedelta(hours=3))
    assert dirty and "cumulative: new labels" in dirty[0].reasons
    result = recompute_project(uow, project, now=T0 + timedelta(hours=3))
    assert {w.scope: w.n_labels for w in result.written}["cumulative"] == 21


def test_second_insert_of_the_same_slot_writes_nothing(uow, engine, project):
    ingest_labels(uow, "p", _rows(5, ["a", "b"], T0))
    recompute_project(uow, project, now=T0 + timedelta(hours=1))
    before = _counts(engine)
    meta = snapshot_view(uow, "p")["snapshot"]
    snapshot = {
        "project_id": project,
        "scope": "cumulative",
        "tick": meta["tick"],
        "computed_at": T0,
        "as_of": T0,
        "window_start": None,
        "window_end": None,
        "watermark": 1,
        "project_label_count": 1,
        "n_labels": 1,
        "n_items": 1,
        "n_raters": 1,
        "n_pairable_items": 0,
        "categories": CATEGORIES,
        "settings": {},
        "code_version": "x",
        "seed": None,
        "interval_method": "none",
        "interval_level": None,
        "duration_ms": 0.0,
        "result": {},
    }
    point = {
        "metric": "kappa_s",
        "subject_kind": "project",
        "subject_id": "",
        "value": 0.1,
        "ci_low": None,
        "ci_high": None,
        "n": 1,
        "reason": None,
    }
    with uow:
        assert uow.snapshots.insert_snapshot(snapshot, [point]) is None
        uow.commit()
    assert _counts(engine) == before


def test_a_failure_while_writing_leaves_nothing(uow, engine, project, monkeypatch):
    ingest_labels(uow, "p", _rows(10, ["a", "b", "c"], T0))

    def explode(hook_uow, project_id, written):
        assert written and _counts_in(hook_uow) > (0, 0)
        raise RuntimeError("alert evaluation failed")

    def _counts_in(hook_uow):
        s = hook_uow.session_for_tests
        return (
            s.execute(text("SELECT count(*) FROM snapshots")).scalar_one(),
            s.execute(text("SELECT count(*) FROM metric_points")).scalar_one(),
        )

    # Alert evaluation runs inside the write transaction: its failure takes the snapshots back.
    with monkeypatch.context() as patched:
        patched.setattr(audit, "evaluate_snapshots", explode)
        with pytest.raises(RuntimeError, match="alert evaluation failed"):
            recompute_project(uow, project, now=T0 + timedelta(hours=1))
    assert _counts(engine) == (0, 0)
    assert recompute_project(uow, project, now=T0 + timedelta(hours=1)).status == "written"


def test_concurrent_recomputes_of_one_project_write_one_snapshot_per_scope(
    uow, engine, project, monkeypatch
):
    ingest_labels(uow, "p", _rows(20, ["a", "b", "c"], T0))
    monkeypatch.setenv(audit.TEST_DELAY_ENV, "0.3")
    now = T0 + timedelta(hours=1)
    results = []

    def run():
        from auditor.storage.unit_of_work import UnitOfWork

        results.append(recompute_project(UnitOfWork(engine), project, now=now))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    statuses = sorted(r.status for r in results)
    assert statuses.count("written") == 1, statuses
    assert set(statuses) <= {"written", "locked", "not_dirty"}
    assert _counts(engine)[0] == 2


def test_loader_matches_the_row_by_row_path(uow, engine, project):
    rows = _rows(25, ["a", "b", "m1"], T0) + _rows(5, ["a"], T0 + timedelta(days=1))  # repeats
    ingest_labels(uow, "p", rows)
    fast = load_project_labels(engine, project).labels
    slow = load_project_labels(engine, project, method="rows").labels
    for name in ("item", "rater", "category", "order", "rater_is_model", "label_ids"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.rater_names == slow.rater_names
    named = sorted(
        (fast.rater_names[r], fast.category_names[c], int(o))
        for r, c, o in zip(fast.rater, fast.category, fast.order, strict=True)
    )
    expected = sorted(
        (r["rater"], r["label"], int(r["labeled_at"].timestamp() * 1_000_000)) for r in rows
    )
    assert named == expected
    assert fast.rater_is_model.tolist() == [n == "m1" for n in fast.rater_names]


def test_query_errors_name_the_problem(uow, project):
    with pytest.raises(NotFound, match="no project 'nope'"):
        snapshot_view(uow, "nope")
    with pytest.raises(NotFound, match="no cumulative snapshot"):
        snapshot_view(uow, "p")
    with pytest.raises(Invalid, match="scope must be"):
        metric_history(uow, "p", "kappa_s", scopes=["weekly"])
    with pytest.raises(Invalid, match="subject must be"):
        metric_history(uow, "p", "kappa_s", subject="bob")
