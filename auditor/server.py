"""The composition root of the web process: the JSON API plus the dashboard, and in embedded
mode (no broker configured) the in-process recompute timer.

It sits above the shells so that ``auditor.api`` and ``auditor.web`` stay independent of each
other; ``auditor serve`` and uvicorn load ``auditor.server:build_app`` by name.
"""

from __future__ import annotations

from fastapi import FastAPI

from auditor.api import create_app
from auditor.config import Settings, get_settings


def build_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = create_app(settings)
    return app
