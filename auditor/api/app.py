"""The FastAPI application factory: a thin shell over the services."""

from __future__ import annotations

from fastapi import FastAPI

from auditor import __version__
from auditor.api.errors import install_error_handlers
from auditor.api.limits import BodySizeLimitMiddleware
from auditor.config import Settings, get_settings


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = FastAPI(
        title="auditor",
        version=__version__,
        description=(
            "Annotation audit service: inter-rater agreement, self-agreement and their history."
        ),
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.api_max_body_bytes)

    @app.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok", "version": __version__}

    return app
