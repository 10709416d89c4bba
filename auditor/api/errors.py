"""One JSON error shape for every error the API returns.

    {"error": {"code": "not_found", "message": "...", "details": [...]}}

``details`` is a list of objects naming where the problem is (row, field) when there is one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from auditor.api.routing import api_routes
from auditor.errors import (
    AuditorError,
    Conflict,
    DatabaseBusy,
    DatabaseUnavailable,
    Failure,
    Invalid,
    NotFound,
    typed_cause,
)
from auditor.storage.db import UNAVAILABLE_RETRY_AFTER_SECONDS

log = logging.getLogger(__name__)

BUSY_RETRY_AFTER_SECONDS = 5
# The database cannot be reached (down, restarting): ask again after this long.

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid",
    429: "too_many_requests",
    500: "internal_error",
    503: "unavailable",
}


class ErrorInfo(BaseModel):
    code: str
    message: str
    details: list[dict[str, Any]]


class ErrorOut(BaseModel):
    """The one error shape."""

    error: ErrorInfo


class ApiError(Exception):
    """Raised by routes for an error with a status, a stable code and optional details."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code or _CODES.get(status, "error")
        self.message = message
        self.details = details or []
        self.headers = headers


class BodyRejected(StarletteHTTPException):
    """A body refused while it is parsed (a repeated key, a NUL); an HTTPException so FastAPI's
    body reader lets it through instead of turning it into a bare 400."""

    def __init__(self, status: int, message: str, details: list[dict[str, Any]] | None = None):
        super().__init__(status, message)
        self.details = details or []


def error_body(
    status: int, message: str, code: str | None = None, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "error": {
            "code": code or _CODES.get(status, "error"),
            "message": message,
            "details": details or [],
        }
    }


def error_response(
    status: int,
    message: str,
    *,
    code: str | None = None,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(status, message, code, details), status, headers=headers)


async def send_error(
    send: Send,
    status: int,
    message: str,
    *,
    code: str | None = None,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer an ASGI request with the one error shape, from a middleware."""
    # rendered as every other error is (JSONResponse's compact JSON), not a second encoder
    body = JSONResponse(error_body(status, message, code, details)).body
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    details = []
    for err in exc.errors():
        location = [str(part) for part in err.get("loc", ())]
        message = str(err.get("msg", "invalid"))
        if err.get("type") in ("dict_type", "model_attributes_type") and tuple(
            err.get("loc", ())
        ) == ("body",):
            # issue 27: a bare list where the route takes an object
            got = type(err.get("input")).__name__
            shown = {"list": "a JSON array", "str": "a JSON string"}.get(got, f"a JSON {got}")
            message = (
                f"the body must be a JSON object, got {shown}: wrap it, e.g. "
                '{"labels": [...]} for POST labels'
            )
        detail: dict[str, Any] = {"location": location, "message": message}
        # A label of a batch: name the row (1-based, as content errors do) and the field.
        loc = err.get("loc", ())
        if len(loc) >= 3 and loc[:2] == ("body", "labels") and isinstance(loc[2], int):
            detail["row"] = loc[2] + 1
            if len(loc) >= 4:
                detail["field"] = str(loc[3])
        details.append(detail)
    return details


def _allowed(request: Request) -> list[str]:
    methods: set[str] = set()
    for route in api_routes(request.app.routes):
        if route.path_regex.match(request.url.path):
            methods |= route.methods or set()
    return sorted(methods)


# The status of every error of auditor.errors, by type (the first match wins; any other
# AuditorError is 400). Its code and details come from the error itself.
_STATUS: tuple[tuple[type[AuditorError], int], ...] = (
    (NotFound, 404),
    (Conflict, 409),
    (Invalid, 422),
)


def status_of(error: AuditorError) -> int:
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 400)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(
            exc.status, exc.message, code=exc.code, details=exc.details, headers=exc.headers
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers) if exc.headers else None
        if exc.status_code == 405:
            # The router names the methods of the first route matching the path only; a path
            # served by several routes (GET and POST) must list them all.
            headers = {**(headers or {}), "Allow": ", ".join(_allowed(request))}
        details = getattr(exc, "details", None)
        return error_response(exc.status_code, str(exc.detail), details=details, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
        first = details[0]["message"] if len(details) == 1 else None
        summary = first if first and first.startswith("the body must be") else None
        return error_response(422, summary or "the request is not valid", details=details)

    @app.exception_handler(AuditorError)
    async def _auditor_error(request: Request, exc: AuditorError) -> JSONResponse:
        if isinstance(exc, Failure):  # not the request's fault: logged, never shown
            return await _unexpected(request, exc)
        # details name the rows and fields (a rejected batch) or the field at fault
        return error_response(status_of(exc), exc.message, code=exc.code, details=exc.details())

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # Starlette runs this handler inside ServerErrorMiddleware, which re-raises after it
        # answers (a traceback, a closed connection): fine for a bug, not for a busy or
        # unreachable database, which ``UnavailableMiddleware`` answers first.
        answer = unavailable(exc)
        if answer is not None:
            return error_response(503, answer.message, code=answer.code, headers=answer.headers)
        log.exception("unexpected error", exc_info=exc)
        return error_response(500, "internal error")


@dataclass(frozen=True)
class Unavailable:
    """A 503: the request may succeed later, nothing is wrong with it."""

    message: str
    code: str
    retry_after: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


def unavailable(exc: BaseException) -> Unavailable | None:
    """The 503 for a busy or unreachable database (logged as a warning, one line), else None.
    By type alone: the storage layer translated the driver's error (``DatabaseBusy``,
    ``DatabaseUnavailable``), possibly the cause of what a service raised."""
    exc = typed_cause(exc, (DatabaseBusy, DatabaseUnavailable)) or exc
    if isinstance(exc, DatabaseBusy):
        # Another writer (a long import on SQLite) holds the lock: busy, not broken.
        log.warning("write lock not available: %s", exc)
        return Unavailable(
            "the database is busy with another write; retry shortly",
            "database_busy",
            BUSY_RETRY_AFTER_SECONDS,
        )
    if isinstance(exc, DatabaseUnavailable):
        # Down or restarting: the request may succeed later, nothing is wrong with it.
        log.warning("database unavailable: %s", exc)
        return Unavailable("database unavailable", "unavailable", UNAVAILABLE_RETRY_AFTER_SECONDS)
    return None


class UnavailableMiddleware:
    """Answers 503 for a busy or unreachable database below ServerErrorMiddleware, so the
    exception ends here: no traceback, and the keep-alive connection stays open for the
    client's next request (a client that retries on 503 but not on a transport error would
    otherwise lose its request). Installed innermost (a route's error, so the middlewares
    outside see the 503) and outermost (a middleware's own lookup, such as the key's)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            answer = None if started else unavailable(exc)
            if answer is None:
                raise
            await send_error(send, 503, answer.message, code=answer.code, headers=answer.headers)
