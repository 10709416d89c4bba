"""The app the browser tests serve: the composition root when it installs the dashboard,
else the JSON API app plus ``install_dashboard`` (the same two calls the root makes)."""

from __future__ import annotations

from fastapi import FastAPI

from auditor.api import create_app
from auditor.config import get_settings
from auditor.server import build_app
from auditor.web import install_dashboard


def build() -> FastAPI:
    settings = get_settings()
    app = build_app(settings)
    if not any(getattr(route, "path", None) == "/projects/{slug}" for route in app.routes):
        app = create_app(settings)
        install_dashboard(app)
    return app
