"""Reverting every import of a project: the numbers of the deleted labels must not stay the
latest (issue 13 item 2, "the next recompute sees the deletion").

The next recompute, explicit or the scheduler's (the scan, then the Celery task), writes one
snapshot in which every measure is undefined with the reason "no labels"; the snapshots
before it stay; alert rules judge the undefined values as insufficient data, never as a drop
or a breach; and nothing more is written until labels come back.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import workers.tasks as tasks
from auditor.services.alerts.reads import alert_status
from auditor.services.alerts.rules import RuleSpec, add_rule
from auditor.services.ingest.imports import list_imports, revert_import
from auditor.services.queries.history import metric_history, snapshot_view
from auditor.services.recompute.recompute import recompute_project, scan_dirty_projects
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.alerts.support import (
    T0,
    evaluations,
    ingest,
    kappa_rule,
    labels,
    log_channel,
    make_project,
)
from tests.integration.health.test_retries_exhausted import eager_tasks  # noqa: F401
from tests.integration.snapshots.test_empty_window import _reasons as undefined_reasons


def _defined(node: Any) -> list[float]:
    """Every defined measure value of a rendered snapshot, at any depth."""
    if isinstance(node, dict):
        own = [node["value"]] if "reason" in node and node.get("value") is not None else []
        return own + [v for value in node.values() for v in _defined(value)]
    if isinstance(node, list):
        return [v for item in node for v in _defined(item)]
    return []


def _project_with_rules(uow: UnitOfWork) -> int:
    project_id = make_project(uow)
    log_channel(uow)
    kappa_rule(uow, threshold=0.5)  # below 0.5 fires
    drop = RuleSpec(
        metric="kappa_s",
        condition="drop",
        drop=0.2,
        lookback=timedelta(hours=1),
        name="kappa-drop",
        min_n=1,
        channels=("log",),
    )
    add_rule(uow, "p", drop)
    # two imports, good agreement; both are reverted below
    ingest(uow, "p", labels(20, T0, agreement=0.95, prefix="a"))
    ingest(uow, "p", labels(20, T0 + timedelta(hours=1), agreement=0.95, prefix="b", seed=1))
    return project_id


def _revert_every_import(uow: UnitOfWork) -> int:
    deleted = 0
    for record in list_imports(uow, "p"):
        deleted += revert_import(uow, "p", record.id).deleted
    return deleted


def _assert_every_measure_undefined(uow: UnitOfWork) -> None:
    for scope in ("cumulative", "7d"):
        shown = snapshot_view(uow, "p", scope=scope)
        assert (shown["n_labels"], shown["n_items"], shown["n_raters"]) == (0, 0, 0)
        assert _defined(shown) == [], scope
        reasons = undefined_reasons(shown)
        assert len(reasons) >= 9 and set(reasons) == {"no labels"}, scope


def test_the_next_recompute_writes_every_measure_undefined(uow) -> None:
    project_id = _project_with_rules(uow)
    first = recompute_project(uow, project_id, now=T0 + timedelta(hours=2))
    assert first.status == "written"
    before = snapshot_view(uow, "p")
    assert before["measures"]["kappa_s"]["value"] > 0.8

    assert _revert_every_import(uow) == 120
    # Within the same minute (the tick already has its snapshot): an explicit recompute
    # takes the next tick, as after any revert.
    after = recompute_project(uow, project_id, now=T0 + timedelta(hours=2))
    assert after.status == "written", after.decisions
    assert {d.reason for d in after.decisions} == {"every label was deleted"}
    assert {w.n_labels for w in after.written} == {0}
    _assert_every_measure_undefined(uow)

    # The history keeps the old number, then shows the undefined one with its reason.
    points = metric_history(uow, "p", "kappa_s", scopes=["cumulative"])
    assert [p.value is None for p in points] == [False, True]
    assert points[-1].reason == "no labels"

    # Alerts: undefined is insufficient data, never a breach nor a drop of 0.9.
    states = {s.rule_id.split(":")[-1]: s for s in alert_status(uow, "p")}
    assert {name: s.status for name, s in states.items()} == {
        "kappa": "insufficient_data",
        "kappa-drop": "insufficient_data",
    }
    assert all(s.value is None for s in states.values())
    logged = evaluations(uow, "p")
    assert len(logged) == 4  # two rules, two snapshots
    assert {e.verdict for e in logged} <= {"clear", "insufficient"}
    assert not [e for e in logged if e.to_status in ("pending", "firing")]

    # Nothing more to write until labels come back; then the numbers are back.
    again = recompute_project(uow, project_id, now=T0 + timedelta(hours=3))
    assert again.status == "not_dirty"
    ingest(uow, "p", labels(20, T0 + timedelta(hours=3), agreement=0.95, prefix="c", seed=2))
    back = recompute_project(uow, project_id, now=T0 + timedelta(hours=4))
    assert back.status == "written"
    assert snapshot_view(uow, "p")["measures"]["kappa_s"]["value"] > 0.8


def test_the_scheduler_finds_the_emptied_project_and_its_task_writes_it(
    uow,
    eager_tasks,  # noqa: F811
) -> None:
    project_id = _project_with_rules(uow)
    now = T0 + timedelta(hours=2)
    assert recompute_project(uow, project_id, now=now).status == "written"
    _revert_every_import(uow)

    # The same tick is taken: the scan waits for the next one, then finds the project dirty.
    assert scan_dirty_projects(uow, now) == []
    later = now + timedelta(minutes=1)
    (dirty,) = scan_dirty_projects(uow, later)
    assert dirty.project_id == project_id
    assert set(dirty.reasons) == {
        "cumulative: every label was deleted",
        "7d: every label was deleted",
    }

    result = tasks.recompute.apply(args=(project_id, dirty.tick))
    assert result.state == "SUCCESS" and result.result == "written"
    _assert_every_measure_undefined(uow)
    # Once written, the empty project is clean: no recompute is enqueued for it again.
    assert scan_dirty_projects(uow, later + timedelta(minutes=5)) == []
    again = tasks.recompute.apply(args=(project_id, dirty.tick))
    assert again.result == "not_dirty"
