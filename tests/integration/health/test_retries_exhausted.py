"""Issue 11 item 2: a transient recompute failure is retried by Celery, and when the retries
are spent the failure is recorded on the project, once; a transient failure that clears within
the retries records nothing.

The task runs in-process (``Task.apply`` runs the real task with its retry policy, minus the
countdowns); the transient failure is injected at the service call.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import workers.tasks as tasks
from auditor.config import get_settings
from auditor.services.projects.projects import create_project
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute.recompute import RecomputeInterrupted, find_project_id


@pytest.fixture
def eager_tasks(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    tasks._engines.clear()
    yield
    tasks._engines.clear()
    get_settings.cache_clear()


def _flaky(monkeypatch: pytest.MonkeyPatch, failures: int) -> list[int]:
    """Make the recompute fail ``failures`` times as if the database went away, then run."""
    calls: list[int] = []
    real = tasks.recompute_project

    def recompute_project(*args, **kwargs):
        calls.append(1)
        if len(calls) <= failures:
            raise RecomputeInterrupted("project: server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(tasks, "recompute_project", recompute_project)
    return calls


def test_spent_retries_are_recorded_once(uow, eager_tasks, monkeypatch):
    create_project(uow, "flaky", ["yes", "no"])
    project_id = find_project_id(uow, "flaky")
    calls = _flaky(monkeypatch, failures=1000)

    result = tasks.recompute.apply(args=(project_id, 1))

    assert result.state == "FAILURE"
    assert len(calls) == 1 + tasks.recompute.max_retries  # the first try and every retry
    (row,) = recompute_health.failures(uow, project_id)
    assert (row.failures, row.consecutive) == (1, 1)
    assert row.last_error == (
        "RecomputeInterrupted: project: server closed the connection unexpectedly"
    )
    assert row.retry_after > row.last_failed_at  # the scan backs off before trying again


def test_a_failure_that_clears_within_the_retries_records_nothing(uow, eager_tasks, monkeypatch):
    create_project(uow, "flaky", ["yes", "no"])
    project_id = find_project_id(uow, "flaky")
    calls = _flaky(monkeypatch, failures=2)

    result = tasks.recompute.apply(args=(project_id, 1))

    assert result.state == "SUCCESS", result.result
    assert len(calls) == 3
    assert recompute_health.failures(uow, project_id) == []
