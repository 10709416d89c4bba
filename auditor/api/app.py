"""The FastAPI application factory: a thin shell over the services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

from fastapi import FastAPI

from auditor import __version__
from auditor.api.auth_first import AuthFirstMiddleware
from auditor.api.errors import ErrorOut, UnavailableMiddleware, install_error_handlers
from auditor.api.hygiene import NulGuardMiddleware, document_nul_refusal
from auditor.api.label_studio_rejections import LabelStudioRejectionsMiddleware
from auditor.api.limits import BodySizeLimitMiddleware
from auditor.api.routes import (
    alerts,
    imports,
    integrations,
    key,
    labels,
    ops,
    projects,
    reads,
    repeats,
    snapshots,
)
from auditor.config import Settings, get_settings
from auditor.storage.db import make_engine

ERROR_RESPONSES: dict[int | str, dict] = {
    status: {"model": ErrorOut, "description": description}
    for status, description in (
        (400, "the body is not JSON, or a JSON object repeats a key"),
        (401, "no key, or an unknown or revoked one"),
        (403, "the key's role may not do this"),
        (404, "no such project for this key, or no such id in it"),
        (409, "the request conflicts with stored state (an existing slug, category or name)"),
        (413, "the body or the batch is too large"),
        (422, "the request is not valid; details name the row and field"),
        (503, "the database is busy with another write (Retry-After says when to retry)"),
    )
}


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    engine = make_engine(settings.database_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        engine.dispose()

    app = FastAPI(
        title="auditor",
        version=__version__,
        description=(
            "Annotation audit service: inter-rater agreement, self-agreement and their history. "
            "Routes under /api/v1 take a project key: `Authorization: Bearer <key>` "
            "(docs/api.md)."
        ),
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.started_at = datetime.now(UTC)  # /healthz: the grace before a first beat
    install_error_handlers(app)
    # Innermost: a route's busy or unreachable database is a 503 that every middleware
    # outside sees as an answer (and the connection stays open).
    app.add_middleware(UnavailableMiddleware)
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.api_max_body_bytes)
    # Added last, so outermost: the key is checked before anything reads or sizes the body.
    app.add_middleware(AuthFirstMiddleware)
    # Outermost of all: a NUL in the path or query is refused before any lookup uses it.
    app.add_middleware(NulGuardMiddleware)
    # Outside even that: every refused call of Label Studio's webhook is counted (it never
    # retries one), whichever layer refused it.
    app.add_middleware(LabelStudioRejectionsMiddleware)
    # And outermost: the same for a middleware's own lookup (the key, before the body).
    app.add_middleware(UnavailableMiddleware)
    app.include_router(ops.router)
    for module in (key, projects, labels, imports, reads, snapshots, alerts, repeats, integrations):
        app.include_router(module.router, responses=ERROR_RESPONSES)
    _document_guards(app)
    return app


def _document_guards(app: FastAPI) -> None:
    generate = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = document_nul_refusal(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
