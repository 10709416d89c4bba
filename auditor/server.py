"""The composition root of the web process: the JSON API plus the dashboard, and in embedded
mode (no broker configured) the in-process recompute timer.

It sits above the shells so that ``auditor.api`` and ``auditor.web`` stay independent of each
other; ``auditor serve`` and uvicorn load ``auditor.server:build_app`` by name (a factory).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import FastAPI

from auditor.api import create_app
from auditor.config import Settings, get_settings
from auditor.services.recompute.embedded import start_in_thread
from auditor.storage.revision import SchemaOutOfDate, require_current_schema
from auditor.storage.unit_of_work import UnitOfWork
from auditor.web import install_dashboard

log = logging.getLogger(__name__)

# How long shutdown waits for a recompute in progress; it writes all or nothing, so an
# abandoned one loses nothing (the daemon thread dies with the process).
STOP_TIMEOUT_SECONDS = 30.0


def build_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = create_app(settings)
    try:
        require_current_schema(app.state.engine)
    except SchemaOutOfDate as error:
        # Refuse to start: every request would fail on a missing column otherwise.
        log.error("%s", error)
        raise SystemExit(f"error: {error}") from None
    install_dashboard(app)
    if settings.broker_url is None:
        _run_embedded_timer(app, settings)
    return app


def _run_embedded_timer(app: FastAPI, settings: Settings) -> None:
    """Start the recompute timer with the app, stop it (and wait for it) with the app."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = app.state.engine
        thread, stop, health = start_in_thread(
            lambda: UnitOfWork(engine),
            settings.scan_interval_seconds,
            idempotency_ttl=timedelta(seconds=settings.idempotency_ttl_seconds),
        )
        app.state.embedded_timer = thread
        app.state.scheduler_health = health  # read by /healthz
        log.info("embedded mode: recomputing every %ss in-process", settings.scan_interval_seconds)
        try:
            async with inner(app):
                yield
        finally:
            stop.set()
            thread.join(STOP_TIMEOUT_SECONDS)
            if thread.is_alive():
                log.warning("the recompute timer did not stop within %ss", STOP_TIMEOUT_SECONDS)

    app.router.lifespan_context = lifespan
