"""The Celery configuration the reliability arguments rest on (no broker needed)."""

from __future__ import annotations

from auditor.config import Settings
from workers.celery_app import RECOMPUTE_TASK, SCAN_TASK, celery_config


def test_reliability_settings(monkeypatch):
    monkeypatch.setenv("AUDITOR_BROKER_KEY_PREFIX", "tenant-a:")
    config = celery_config(
        Settings(
            broker_url="redis://h:6379/3",
            scan_interval_seconds=15,
            recompute_visibility_timeout_seconds=900,
        )
    )
    assert config["broker_url"] == "redis://h:6379/3"
    assert config["task_serializer"] == "json" and config["accept_content"] == ["json"]
    assert config["task_acks_late"] and config["task_reject_on_worker_lost"]
    assert config["worker_prefetch_multiplier"] == 1
    assert config["task_ignore_result"] and config["result_backend"] is None
    options = config["broker_transport_options"]
    assert options["visibility_timeout"] == 900
    assert options["global_keyprefix"] == "tenant-a:"
    assert options["unacked_restore_interval"] == 10  # a tenth of the timeout, at most 10 s
    scan = config["beat_schedule"]["scan-dirty-projects"]
    assert scan["task"] == SCAN_TASK and scan["schedule"] == 15
    assert scan["options"]["expires"] == 15


def test_tasks_are_registered_under_stable_names():
    import workers

    assert {SCAN_TASK, RECOMPUTE_TASK} <= set(workers.app.tasks)
    recompute = workers.app.tasks[RECOMPUTE_TASK]
    assert recompute.max_retries == 10 and recompute.autoretry_for


def test_label_studio_syncs_are_scheduled_and_registered():
    import workers
    from workers.celery_app import LABEL_STUDIO_SYNC_TASK, LABEL_STUDIO_SYNCS_TASK

    config = celery_config(Settings(broker_url="redis://h:6379/3"))
    entry = config["beat_schedule"]["label-studio-syncs"]
    assert entry["task"] == LABEL_STUDIO_SYNCS_TASK and entry["schedule"] == 60.0
    assert {LABEL_STUDIO_SYNCS_TASK, LABEL_STUDIO_SYNC_TASK} <= set(workers.app.tasks)
