"""The worker's heartbeat: a thread of each worker's main process writes ``worker:<hostname>``
every scan interval (``auditor.services.recompute.worker_health``), from when the worker is
ready to take tasks until it shuts down (then the row is deleted). Distributed ``/healthz``
is 503 when no worker wrote one within three scan intervals.

A database that is down is logged and tried again at the next interval: the row goes stale,
which is what ``/healthz`` should see."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

from celery.signals import worker_ready, worker_shutdown

from auditor.config import get_settings
from auditor.services.recompute.worker_health import worker_beat, worker_gone
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

_stop = threading.Event()
_state: dict[str, Any] = {}


def _loop(hostname: str, interval: float) -> None:
    engine = make_engine(get_settings().database_url)
    _state["engine"] = engine
    while True:
        try:
            worker_beat(UnitOfWork(engine), hostname, interval)
        except Exception as error:
            log.warning("could not write the worker heartbeat: %s", type(error).__name__)
        if _stop.wait(interval):
            return


def start(sender: Any = None, **_: Any) -> None:
    hostname = str(getattr(sender, "hostname", None) or socket.gethostname())
    interval = max(0.5, float(get_settings().scan_interval_seconds))
    _state["hostname"] = hostname
    _stop.clear()
    thread = threading.Thread(
        target=_loop, args=(hostname, interval), name="auditor-worker-heartbeat", daemon=True
    )
    _state["thread"] = thread
    thread.start()


def stop(**_: Any) -> None:
    _stop.set()
    thread = _state.get("thread")
    if thread is not None:
        thread.join(5)
    engine = _state.get("engine")
    if engine is not None and "hostname" in _state:
        try:
            worker_gone(UnitOfWork(engine), _state["hostname"])
        except Exception as error:
            log.warning("could not delete the worker heartbeat: %s", type(error).__name__)
        engine.dispose()


worker_ready.connect(start, weak=False)
worker_shutdown.connect(stop, weak=False)
