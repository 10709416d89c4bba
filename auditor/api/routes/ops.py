"""Operations: liveness and Prometheus metrics (outside /api/v1, no project key)."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request, Response

from auditor import __version__
from auditor.api.errors import ApiError
from auditor.services.metrics import CONTENT_TYPE, exposition
from auditor.storage.unit_of_work import UnitOfWork

router = APIRouter(tags=["ops"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok", "version": __version__}


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def metrics(request: Request) -> Response:
    """Prometheus text exposition, read from the database at scrape time. Open unless
    ``AUDITOR_METRICS_TOKEN`` is set (then ``Authorization: Bearer <token>``)."""
    token = request.app.state.settings.metrics_token
    if token is not None:
        # Read by hand, not as a declared security scheme: the route is open by default.
        given = request.headers.get("authorization", "").removeprefix("Bearer ").encode()
        if not hmac.compare_digest(given, token.get_secret_value().encode()):
            raise ApiError(
                401, "the metrics token is required", headers={"WWW-Authenticate": "Bearer"}
            )
    engine = request.app.state.engine
    body = exposition(lambda: UnitOfWork(engine, read_only=True))
    return Response(body, media_type=CONTENT_TYPE)
