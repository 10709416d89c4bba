"""The Celery side of alerts without a broker: the deliver task is registered and scheduled,
and running it sends due notices; the recompute task's process evaluates rules."""

from __future__ import annotations

from datetime import timedelta

import pytest

from auditor.config import Settings, get_settings
from auditor.services.alerts.channels import ChannelSpec, add_channel
from auditor.services.alerts.reads import notification_history
from tests.integration.alerts.support import T0, ingest, kappa_rule, labels, recompute
from workers.celery_app import DELIVER_TASK, celery_config

HOUR = timedelta(hours=1)


def test_deliver_task_is_registered_and_on_the_beat_schedule():
    import workers

    entry = celery_config(Settings(broker_url="redis://h:6379/0"))["beat_schedule"]
    assert entry["deliver-alert-notices"]["task"] == DELIVER_TASK
    assert DELIVER_TASK in workers.app.tasks


@pytest.fixture
def tasks_on(database_url, monkeypatch):
    from workers import tasks

    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    monkeypatch.setenv("AUDITOR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8")  # the receiver's
    get_settings.cache_clear()
    tasks._engines.clear()  # the tasks keep one engine per process
    yield tasks
    tasks._engines.clear()
    get_settings.cache_clear()


def test_deliver_task_sends_due_notices(tasks_on, uow, project, receiver):
    spec = ChannelSpec(name="hook", kind="webhook", config={"url": receiver.url})
    add_channel(uow, "p", spec)
    kappa_rule(uow, channels=("hook",))
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    recompute(uow, project, T0 + 2 * HOUR)
    assert tasks_on.deliver.run() == 1
    assert tasks_on.deliver.run() == 0
    (row,) = notification_history(uow, "p")
    assert row.status == "sent" and len(receiver.received) == 1
