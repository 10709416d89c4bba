"""The label load reads raters, categories and labels as of ONE snapshot (issue 11, item 1).

A batch that brings a new rater and a new category commits between the load's read of the
reference rows and its read of the labels (injected exactly there, on a second connection).
Before the fix this raised "labels refer to raters ... not in the project" on PostgreSQL;
now the load sees the database as it was when it began, on both backends.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import add_categories, create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage import label_loader
from auditor.storage.label_loader import load_project_labels
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def _batch(raters: list[str], label: str, n_items: int = 4) -> list[dict]:
    return [
        {"item": f"i{i}", "rater": r, "label": label, "labeled_at": T0 + timedelta(minutes=i)}
        for i in range(n_items)
        for r in raters
    ]


@pytest.fixture
def project(uow: UnitOfWork) -> int:
    create_project(uow, "p", ["yes", "no"], windows_days=(7,), recompute_interval_seconds=60)
    ingest_labels(uow, "p", _batch(["a", "b"], "yes"))
    return find_project_id(uow, "p")


@pytest.fixture
def commit_between_reads(monkeypatch: pytest.MonkeyPatch, engine):
    """Commit a batch with a new rater and a new category just before the label columns are
    read (after the raters and categories were), once."""
    done: list[bool] = []

    def before_labels() -> None:
        if done:
            return
        done.append(True)
        writer = UnitOfWork(engine)
        add_categories(writer, "p", ["late"])
        ingest_labels(writer, "p", _batch(["newcomer"], "late"))

    for name in ("fetch_columns_adbc", "fetch_columns_sqlite"):
        original = getattr(label_loader, name)

        def wrapped(*args, _original=original, **kwargs):
            before_labels()
            return _original(*args, **kwargs)

        monkeypatch.setattr(label_loader, name, wrapped)
    return done


def test_a_batch_committed_during_the_load_is_not_half_seen(engine, project, commit_between_reads):
    loaded = load_project_labels(engine, project)
    assert commit_between_reads, "the injection did not run"
    assert loaded.count == 8
    assert sorted(loaded.labels.rater_names) == ["a", "b"]
    assert loaded.labels.category_names == ("yes", "no")
    after = load_project_labels(engine, project)
    assert after.count == 12
    assert "newcomer" in after.labels.rater_names
    assert after.labels.category_names == ("yes", "no", "late")


def test_a_recompute_racing_a_new_rater_writes_what_it_read(
    uow, engine, project, commit_between_reads
):
    result = recompute_project(uow, project, now=T0 + timedelta(hours=1))
    assert result.status == "written"
    counts = {w.scope: w.n_labels for w in result.written}
    assert counts["cumulative"] == 8
    # the next recompute picks the late batch up
    again = recompute_project(uow, project, now=T0 + timedelta(hours=2))
    assert {w.scope: w.n_labels for w in again.written}["cumulative"] == 12
