"""Snapshots served from the kept statistics (issue 22): the cumulative scope and the rolling
window of a recompute that reads no label beyond the new ones. Their point values equal
``compute_measures`` over every label (the window's: over the window's labels) to 1e-9; the
parts the kept sums do not cover are carried from the last full pass, said so in ``source``,
without metric points and without alert evaluation. On SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from auditor.cli.recompute import describe_recompute
from auditor.config import get_settings
from auditor.domain import to_micros
from auditor.services.alerts.rules import RuleSpec, add_rule
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute import kept_snapshot
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.snapshots.subset import subset_labels
from auditor.stats import compute_measures
from auditor.stats.export import MODEL_STATS, RATER_STATS, measure_set_to_dict
from auditor.storage.label_loader import load_project_labels
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2025, 3, 1, tzinfo=UTC)
CATEGORIES = ["a", "b", "c"]
_ticks = itertools.count()


@pytest.fixture
def kept_always(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every project served from its kept statistics, no full pass due after the first."""
    monkeypatch.setenv("AUDITOR_KEPT_SNAPSHOT_LABELS", "0")
    monkeypatch.setenv("AUDITOR_KEPT_FULL_PASS_SECONDS", "1e9")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _rows(n: int, start: int, days: float, model: bool = False) -> list[dict[str, Any]]:
    """``n`` labels on 12 items by 5 raters (r4 a model when ``model``), over ``days``."""
    rows = []
    for k in range(start, start + n):
        rater = k % 5
        rows.append(
            {
                "item": f"i{(k * 7) % 12}",
                "rater": "m" if model and rater == 4 else f"r{rater}",
                "rater_kind": "model" if model and rater == 4 else "human",
                "label": CATEGORIES[(k * k + k // 3) % 3],
                "labeled_at": T0
                + timedelta(seconds=days * 86_400 * (k - start) / n, microseconds=next(_ticks)),
            }
        )
    return rows


def _latest(uow: UnitOfWork, project_id: int, scope: str) -> dict[str, Any]:
    with uow:
        found = uow.snapshots.snapshot_at(project_id, scope, None)
    assert found is not None
    return found


def _points(uow: UnitOfWork, snapshot_id: int) -> dict[tuple[str, str, str], Any]:
    with uow:
        metrics = [m for m, _, _ in uow.snapshots.known_metrics(_project_of(uow, snapshot_id))]
        points = uow.alerts.points_of_snapshot(snapshot_id, metrics)
    return {(p.metric, p.subject_kind, p.subject_id): p for p in points}


def _project_of(uow: UnitOfWork, snapshot_id: int) -> int:
    found = uow.snapshots.snapshot_by_id(snapshot_id)
    assert found is not None
    return int(found["project_id"])


def _close(ours: dict[str, Any], theirs: dict[str, Any], where: str) -> None:
    if theirs["value"] is None:
        assert ours["value"] is None, (where, ours, theirs)
    else:
        assert ours["value"] is not None, (where, ours, theirs)
        assert abs(ours["value"] - theirs["value"]) <= 1e-9, (where, ours, theirs)
    assert ours.get("n") == theirs.get("n"), (where, ours, theirs)


def _compare(result: dict[str, Any], expected: dict[str, Any], carried: set[str]) -> int:
    """Every part of ``result`` not carried against ``expected``; returns how many numbers
    were compared (a comparison of nothing must not pass)."""
    compared = 0
    for name, measure in expected["measures"].items():
        if f"measures.{name}" in carried or f"by_category.{name}" in carried:
            continue
        if "value" in measure:
            _close(result["measures"][name], measure, name)
            compared += 1
        else:  # per category
            for category, inner in measure.items():
                _close(result["measures"][name][category], inner, f"{name}:{category}")
                compared += 1
    assert set(result["raters"]) == set(expected["raters"])
    for rater, metrics in expected["raters"].items():
        for name in RATER_STATS:
            if f"raters.{name}" not in carried and name in metrics:
                _close(result["raters"][rater][name], metrics[name], f"{rater}.{name}")
                compared += 1
    if "models" not in carried:
        assert set(result["models"]) == set(expected["models"])
        for rater, metrics in expected["models"].items():
            for name in MODEL_STATS:
                _close(result["models"][rater][name], metrics[name], f"model {rater}.{name}")
                compared += 1
    if "pairwise_cohen" not in carried:
        pairs = {(p["rater_a"], p["rater_b"]): p for p in result["pairwise_cohen"]}
        for pair in expected["pairwise_cohen"]:
            _close(pairs[pair["rater_a"], pair["rater_b"]]["kappa"], pair["kappa"], "pair")
            compared += 1
    for key in ("n_labels", "n_items", "n_raters", "n_pairable_items", "categories"):
        assert result[key] == expected[key], key
    return compared


def _expected(uow: UnitOfWork, project_id: int, window: tuple[datetime, datetime] | None):
    loaded = load_project_labels(uow.root_engine, project_id)
    labels = loaded.labels
    if window is not None:
        start, end = (to_micros(t) for t in window)
        labels = subset_labels(labels, (labels.order >= start) & (labels.order <= end))
    with uow:
        project = uow.projects.by_id(project_id)
        assert project is not None
        settings = project.settings
    return measure_set_to_dict(compute_measures(labels, settings))


@pytest.mark.parametrize("model", [False, True])
def test_a_recompute_serves_both_scopes_from_the_kept_statistics(
    uow: UnitOfWork, kept_always: None, model: bool
) -> None:
    create_project(uow, "k", CATEGORIES)
    project_id = find_project_id(uow, "k")
    ingest_labels(uow, "k", _rows(120, 0, 9, model))
    now = T0 + timedelta(days=10)
    first = recompute_project(uow, project_id, now=now)
    assert {w.scope for w in first.written} == {"cumulative", "7d"}
    assert all("source" not in w.rendered for w in first.written)  # the first full pass
    full = {w.scope: w.rendered for w in first.written}

    ingest_labels(uow, "k", _rows(40, 120, 9.5, model))
    now += timedelta(hours=2)
    second = recompute_project(uow, project_id, now=now)
    said = describe_recompute("k", second)
    assert said.count("from kept statistics") == 2, said
    for written in second.written:
        source = written.rendered["source"]
        assert source["statistics"] == "kept" and source["full_pass"] is not None
        carried = set(source["carried"])
        window = None if written.scope == "cumulative" else (now - timedelta(days=7), now)
        expected = _expected(uow, project_id, window)
        assert _compare(written.rendered, expected, carried) > 20
        # carried parts are the full pass's numbers, without points or evaluation
        points = _points(uow, written.id)
        for part in carried:
            section, _, name = part.partition(".")
            if section == "measures":
                assert written.rendered["measures"][name] == full[written.scope]["measures"][name]
                assert (name, "project", "") not in points
        for (metric, kind, _), _point in points.items():
            assert f"measures.{metric}" not in carried or kind != "project"
            assert f"raters.{metric}" not in carried or kind != "rater"


def test_the_full_pass_comes_back_when_due(
    uow: UnitOfWork, kept_always: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_project(uow, "due", CATEGORIES)
    project_id = find_project_id(uow, "due")
    ingest_labels(uow, "due", _rows(60, 0, 3))
    now = T0 + timedelta(days=4)
    recompute_project(uow, project_id, now=now)
    ingest_labels(uow, "due", _rows(10, 60, 3))
    served = recompute_project(uow, project_id, now=now + timedelta(minutes=5))
    assert all("source" in w.rendered for w in served.written)
    monkeypatch.setenv("AUDITOR_KEPT_FULL_PASS_SECONDS", "0.000001")
    monkeypatch.setattr(kept_snapshot, "FULL_PASS_SPACING", 0.0)
    get_settings.cache_clear()
    ingest_labels(uow, "due", _rows(10, 70, 3))
    again = recompute_project(uow, project_id, now=now + timedelta(minutes=10))
    assert again.written and all("source" not in w.rendered for w in again.written)
    # an explicit --force is a full pass too, and so is every recompute of a bootstrap project
    monkeypatch.setenv("AUDITOR_KEPT_FULL_PASS_SECONDS", "1e9")
    get_settings.cache_clear()
    forced = recompute_project(uow, project_id, now=now + timedelta(minutes=15), force=True)
    assert forced.written and all("source" not in w.rendered for w in forced.written)


def test_bootstrap_projects_read_every_label(uow: UnitOfWork, kept_always: None) -> None:
    create_project(uow, "boot", CATEGORIES, interval_method="bootstrap", bootstrap_resamples=50)
    project_id = find_project_id(uow, "boot")
    ingest_labels(uow, "boot", _rows(60, 0, 3))
    recompute_project(uow, project_id, now=T0 + timedelta(days=4))
    ingest_labels(uow, "boot", _rows(10, 60, 3))
    second = recompute_project(uow, project_id, now=T0 + timedelta(days=4, hours=1))
    assert second.written and all("source" not in w.rendered for w in second.written)


def test_a_carried_metric_is_neither_pointed_nor_evaluated(
    uow: UnitOfWork, kept_always: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fleiss' kappa made a carried part: the served snapshot repeats the full pass's value,
    writes no point for it, and its rule is not evaluated on that snapshot (a sequential
    test would count the full pass's observation twice); kappa_S's rule is."""
    original = kept_snapshot.kept_measure_set

    def without_fleiss(*args: Any, **kwargs: Any) -> Any:
        found = original(*args, **kwargs)
        return dataclasses.replace(found, missing=(*found.missing, "measures.fleiss_kappa"))

    monkeypatch.setattr(kept_snapshot, "kept_measure_set", without_fleiss)
    create_project(uow, "carry", CATEGORIES)
    project_id = find_project_id(uow, "carry")
    for metric in ("fleiss_kappa", "kappa_s"):
        add_rule(
            uow,
            "carry",
            RuleSpec(metric=metric, condition="below", threshold=0.99, name=metric, min_n=1),
        )
    ingest_labels(uow, "carry", _rows(60, 0, 3))
    first = recompute_project(uow, project_id, now=T0 + timedelta(days=4))
    ingest_labels(uow, "carry", _rows(30, 60, 3))
    second = recompute_project(uow, project_id, now=T0 + timedelta(days=4, hours=1))
    full = next(w for w in first.written if w.scope == "cumulative")
    served = next(w for w in second.written if w.scope == "cumulative")
    assert served.rendered["measures"]["fleiss_kappa"] == full.rendered["measures"]["fleiss_kappa"]
    assert ("fleiss_kappa", "project", "") not in _points(uow, served.id)
    assert ("kappa_s", "project", "") in _points(uow, served.id)
    with uow:
        done = uow.alert_log.evaluated_keys([served.id])
    rules = {rule_id for rule_id, _, _ in done}
    with uow:
        names = {r.id: r.metric for r in uow.alerts.list_rules(project_id, enabled_only=True)}
    assert {names[r] for r in rules} == {"kappa_s"}


def test_a_window_that_moved_is_served_without_new_labels(
    uow: UnitOfWork, kept_always: None
) -> None:
    """No new label, but a day of labels left the 7-day window: only the window is due, and
    it too comes from the kept statistics (reading every label for it would cost what they
    save)."""
    create_project(uow, "aged", CATEGORIES)
    project_id = find_project_id(uow, "aged")
    ingest_labels(uow, "aged", _rows(90, 0, 9))
    now = T0 + timedelta(days=9, hours=1)
    recompute_project(uow, project_id, now=now)
    ingest_labels(uow, "aged", _rows(10, 90, 9))
    recompute_project(uow, project_id, now=now + timedelta(hours=1))
    later = now + timedelta(days=1, hours=2)
    moved = recompute_project(uow, project_id, now=later)
    assert [w.scope for w in moved.written] == ["7d"]
    (window,) = moved.written
    assert window.rendered["source"]["statistics"] == "kept"
    expected = _expected(uow, project_id, (later - timedelta(days=7), later))
    assert _compare(window.rendered, expected, set(window.rendered["source"]["carried"])) > 20
