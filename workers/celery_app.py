"""The Celery app: Redis only wakes work up; PostgreSQL holds every fact.

Reliability settings, and why:
- JSON only: a message is data (ids), never code.
- ``task_acks_late`` + ``task_reject_on_worker_lost``: a task is acknowledged after it ran, so
  a worker killed mid-recompute leaves the message to be delivered again. Redelivery is safe
  because a snapshot is insert-or-nothing on (project, scope, tick).
- ``worker_prefetch_multiplier = 1``: a worker holds one recompute at a time, so a slow one
  does not sit on messages another worker could run.
- visibility timeout above the slowest recompute, or Redis would hand a running task to a
  second worker (harmless, thanks to the lock and the unique key, but wasted work).
- no result backend: tasks return nothing anyone waits for.

Beat sends one ``scan`` every ``AUDITOR_SCAN_INTERVAL_SECONDS``; the scan enqueues a recompute
for each dirty project. If Redis loses its data, the next scan finds the same projects dirty.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import beat_init, worker_init

from auditor.config import Settings, get_settings

SCAN_TASK = "auditor.scan"
RECOMPUTE_TASK = "auditor.recompute"
# Alerts (issue 5): one pass of the outbox sender. Beat runs it every few seconds; the
# recompute task also enqueues it after writing snapshots, so a notice goes out at once.
DELIVER_TASK = "auditor.deliver"
DELIVER_INTERVAL_SECONDS = 10.0
# Label Studio (docs/integrations.md): beat looks for due scheduled syncs every minute (a
# project's own period, ``auditor label-studio settings --sync-every``, is in minutes) and a
# worker runs each one.
LABEL_STUDIO_SYNCS_TASK = "auditor.label_studio_syncs"
LABEL_STUDIO_SYNC_TASK = "auditor.label_studio_sync"
LABEL_STUDIO_SYNCS_INTERVAL_SECONDS = 60.0


def celery_config(settings: Settings) -> dict[str, Any]:
    """The whole Celery configuration, as a plain dict (tested without a broker)."""
    scan_every = settings.scan_interval_seconds
    visibility = settings.recompute_visibility_timeout_seconds
    transport_options: dict[str, Any] = {
        "visibility_timeout": visibility,
        # Messages of a worker that died unacknowledged are put back by a sweep; kombu's
        # default sweep runs about every 100 s. Sweep at a tenth of the visibility timeout
        # (at most every 10 s) so a redelivery follows the timeout closely.
        "unacked_restore_interval": max(1, min(10, visibility // 10)),
        "unacked_restore_throttle": 1,
    }
    prefix = settings.broker_key_prefix
    if prefix:
        transport_options["global_keyprefix"] = prefix
    return {
        "broker_url": settings.broker_url,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": transport_options,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "result_backend": None,
        "timezone": "UTC",
        "enable_utc": True,
        "beat_schedule": {
            "scan-dirty-projects": {
                "task": SCAN_TASK,
                "schedule": scan_every,
                # A scan that waited longer than one interval is superseded by the next one.
                "options": {"expires": scan_every},
            },
            "deliver-alert-notices": {
                "task": DELIVER_TASK,
                "schedule": DELIVER_INTERVAL_SECONDS,
                "options": {"expires": DELIVER_INTERVAL_SECONDS},
            },
            "label-studio-syncs": {
                "task": LABEL_STUDIO_SYNCS_TASK,
                "schedule": LABEL_STUDIO_SYNCS_INTERVAL_SECONDS,
                "options": {"expires": LABEL_STUDIO_SYNCS_INTERVAL_SECONDS},
            },
        },
    }


def create_app(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    app = Celery("auditor")
    app.conf.update(celery_config(settings))
    return app


app = create_app()


def _require_broker(**_: Any) -> None:
    if not get_settings().broker_url:
        raise RuntimeError(
            "AUDITOR_BROKER_URL is not set: a Celery worker or beat needs a Redis broker "
            "(e.g. redis://127.0.0.1:6379/0); without one, use `auditor run` (embedded mode)"
        )


def require_current_schema(**_: Any) -> None:
    """Refuse to start a worker or beat on a database behind the code: one line naming the
    revisions and `auditor db upgrade`, exit 1 (as the CLI and the server do), instead of every
    task failing later on a missing column. ``SystemExit``: Celery logs and swallows an
    ``Exception`` a signal handler raises, and would start anyway."""
    from auditor.storage.db import make_engine
    from auditor.storage.revision import SchemaOutOfDate
    from auditor.storage.revision import require_current_schema as check

    engine = make_engine(get_settings().database_url)
    try:
        check(engine)
    except SchemaOutOfDate as error:
        raise SystemExit(f"error: {error}") from None
    finally:
        engine.dispose()


for _signal in (worker_init, beat_init):
    _signal.connect(_require_broker, weak=False)
    _signal.connect(require_current_schema, weak=False)
