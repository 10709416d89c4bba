"""Operations: liveness and Prometheus metrics (outside /api/v1, no project key)."""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import APIRouter, Request, Response

from auditor import __version__
from auditor.api.errors import ApiError, ErrorOut
from auditor.api.prometheus import CONTENT_TYPE, exposition
from auditor.services.access.client_access import bearer_matches, local_client
from auditor.services.recompute.health import (
    SchedulerHealth,
    SchedulerReport,
    distributed_report,
    with_failing_projects,
)
from auditor.services.recompute.worker_health import WorkersReport, workers_report
from auditor.storage.unit_of_work import UnitOfWork

router = APIRouter(tags=["ops"])


@router.get(
    "/healthz",
    responses={
        503: {
            "description": "the scheduler is dead or has not completed a cycle lately, or "
            "(distributed) no worker has answered lately"
        }
    },
)
def healthz(request: Request, response: Response) -> dict[str, Any]:
    """Liveness of the process and of the recompute scheduler.

    ``status`` is ok, or degraded when the last cycle recorded an error (still 200). 503
    when the embedded scheduler thread is dead or its last completed cycle (distributed: the
    beat scan's heartbeat in the database) is older than three scan intervals, and in
    distributed mode when no worker's heartbeat is (``workers``: how many answered)."""
    state = request.app.state
    settings = state.settings
    health: SchedulerHealth | None = getattr(state, "scheduler_health", None)
    report: SchedulerReport | None = None
    workers: WorkersReport | None = None
    if health is not None:
        report = health.report()
    elif settings.broker_url is not None:
        try:
            report = distributed_report(
                UnitOfWork(state.engine, read_only=True),
                settings.scan_interval_seconds,
                state.started_at,
            )
            workers = workers_report(
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
    if workers is not None:
        body["workers"] = workers.as_json()
        if not workers.healthy:
            body["status"] = "degraded"
            response.status_code = 503
    return body


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
        401: {"model": ErrorOut, "description": "a token is configured and was not given"},
        403: {"model": ErrorOut, "description": "no token is configured; not this machine"},
    },
)
def metrics(request: Request) -> Response:
    """Prometheus text exposition, read from the database at scrape time. With
    ``AUDITOR_METRICS_TOKEN`` set it takes ``Authorization: Bearer <token>``; unset, it answers
    only clients on this machine (loopback, and no forwarding header unless the peer is in
    ``AUDITOR_TRUSTED_PROXIES``): it lists every project, rater and alert state."""
    settings = request.app.state.settings
    token = settings.metrics_token
    if token is not None:
        # Read by hand, not as a declared security scheme: without a token it is not needed.
        given = request.headers.get("authorization", "")
        if not bearer_matches(given, token.get_secret_value()):
            raise ApiError(
                401,
                "the metrics token is required: Authorization: Bearer <token>",
                headers={"WWW-Authenticate": "Bearer"},
            )
    else:
        peer = request.client.host if request.client else None
        reason = local_client(peer, request.headers, settings.trusted_proxy_networks)
        if reason is not None:
            raise ApiError(
                403,
                f"/metrics answers only this machine unless AUDITOR_METRICS_TOKEN is set: {reason}",
            )
    engine = request.app.state.engine
    body = exposition(lambda: UnitOfWork(engine, read_only=True))
    return Response(body, media_type=CONTENT_TYPE)
