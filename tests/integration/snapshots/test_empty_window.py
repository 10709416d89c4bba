"""A rolling window that holds no labels says so for every measure ("no labels in the last
7 days"), instead of the stats' "no pairable item" / "no repeated presentations", which send
a reader of last year's file looking for a pairing problem (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from auditor.services.ingest.labels import ingest_labels
from auditor.services.queries.history import metric_history, snapshot_view
from auditor.services.recompute.recompute import recompute_project
from tests.integration.snapshots.test_recompute import T0, _rows, project  # noqa: F401

EMPTY = "no labels in the last 7 days (the latest is from 2024-05-01)"


def _reasons(node: Any) -> list[str | None]:
    """The reason of every undefined measure of a rendered snapshot, at any depth."""
    if isinstance(node, dict):
        own = [node["reason"]] if node.get("value", 0) is None and "reason" in node else []
        return own + [r for value in node.values() for r in _reasons(value)]
    if isinstance(node, list):
        return [r for item in node for r in _reasons(item)]
    return []


def test_an_empty_window_names_the_window_for_every_measure(uow, project):  # noqa: F811
    # A file of 2024 labels (repeats included) recomputed in a later week.
    rows = _rows(12, ["a", "b", "c"], T0)
    rows += [{**row, "labeled_at": row["labeled_at"] + timedelta(hours=2)} for row in rows[:9]]
    ingest_labels(uow, "p", rows)
    recompute_project(uow, project, now=T0 + timedelta(days=30))

    window = snapshot_view(uow, "p", scope="7d")
    assert window["n_labels"] == 0
    reasons = _reasons(window)
    assert len(reasons) >= 9 and set(reasons) == {EMPTY}
    # The history points (what the dashboard cards read) carry the same reason.
    for metric in ("kappa_s", "rho", "mean_self_agreement"):
        points = metric_history(uow, "p", metric, scopes=["7d"])
        assert [(p.value, p.reason) for p in points] == [(None, EMPTY)], metric
    # The cumulative scope holds the labels: defined, its reasons untouched.
    cumulative = snapshot_view(uow, "p")
    assert cumulative["measures"]["kappa_s"]["value"] is not None
    assert EMPTY not in _reasons(cumulative)


def test_a_window_with_labels_keeps_the_reasons_of_the_stats(uow, project):  # noqa: F811
    # Labels inside the window but no repeated presentation: rho's own reason stays.
    ingest_labels(uow, "p", _rows(12, ["a", "b", "c"], T0))
    recompute_project(uow, project, now=T0 + timedelta(days=1))
    window = snapshot_view(uow, "p", scope="7d")
    assert window["measures"]["kappa_s"]["value"] is not None
    rho = window["measures"]["rho"]
    assert rho["value"] is None and "no labels" not in rho["reason"]
