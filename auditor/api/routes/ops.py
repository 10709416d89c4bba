"""Operations: liveness and Prometheus metrics (outside /api/v1, no project key)."""

from __future__ import annotations

import contextlib
import hmac
from typing import Any

from fastapi import APIRouter, Request, Response

from auditor import __version__
from auditor.api.errors import ApiError
from auditor.services.metrics import CONTENT_TYPE, exposition
from auditor.services.recompute_health import (
    SchedulerHealth,
    SchedulerReport,
    distributed_report,
    with_failing_projects,
)
from auditor.storage.unit_of_work import UnitOfWork

router = APIRouter(tags=["ops"])


@router.get(
    "/healthz",
    responses={503: {"description": "the scheduler is dead or has not completed a cycle lately"}},
)
def healthz(request: Request, response: Response) -> dict[str, Any]:
    """Liveness of the process and of the recompute scheduler.

    ``status`` is ok, or degraded when the last cycle recorded an error (still 200). 503
    when the embedded scheduler thread is dead or its last completed cycle (distributed: the
    beat scan's heartbeat in the database) is older than three scan intervals."""
    state = request.app.state
    settings = state.settings
    health: SchedulerHealth | None = getattr(state, "scheduler_health", None)
    report: SchedulerReport | None = None
    if health is not None:
        report = health.report()
    elif settings.broker_url is not None:
        try:
            report = distributed_report(
                UnitOfWork(state.engine, read_only=True),
                settings.scan_interval_seconds,
                state.started_at,
            )
        except Exception as error:  # the database is down: say so, do not 500
            response.status_code = 503
            return {
                "status": "degraded",
                "version": __version__,
                "scheduler": None,
                "error": f"cannot read the scheduler heartbeat: {type(error).__name__}",
            }
    body: dict[str, Any] = {"status": "ok", "version": __version__, "scheduler": None}
    if report is not None:
        # The count is a detail; staleness above is what /healthz judges.
        with contextlib.suppress(Exception):
            report = with_failing_projects(UnitOfWork(state.engine, read_only=True), report)
        body["scheduler"] = report.as_json()
        body["status"] = "degraded" if report.degraded else "ok"
        if not report.healthy:
            response.status_code = 503
    return body


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
