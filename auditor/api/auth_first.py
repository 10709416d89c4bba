"""Authenticate from the headers before anything reads the body.

FastAPI reads and parses a request's body before it solves the route's dependencies, so a
key checked in a dependency is checked too late: an unauthenticated client could make the
server buffer and parse 10 MB bodies (and learn "JSON decode error" instead of 401). This
middleware runs first, on the headers only:

- ``/api/v1/projects/{slug}...``: the ``Authorization: Bearer <key>`` key must be known and
  not revoked (401 otherwise) and belong to ``slug`` (404 otherwise, as an unknown slug);
  the principal is handed to the route's dependency, which checks the role;
- ``/api/v1/projects`` itself: the operator token (``AUDITOR_ADMIN_TOKEN``).

A refused request is answered without reading its body; the server discards the body as it
arrives and keeps the connection open.
"""

from __future__ import annotations

from urllib.parse import unquote

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from auditor.api.deps import PROJECTS_PREFIX, identify, operator_check
from auditor.api.errors import ApiError, send_error


class AuthFirstMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == PROJECTS_PREFIX or path.startswith(PROJECTS_PREFIX + "/"):
            try:
                await self._check(scope, path)
            except ApiError as error:
                await send_error(
                    send,
                    error.status,
                    error.message,
                    code=error.code,
                    details=error.details,
                    headers=error.headers,
                )
                return
        await self.app(scope, receive, send)

    async def _check(self, scope: Scope, path: str) -> None:
        app = scope["app"]
        header = _header(scope, b"authorization")
        if path == PROJECTS_PREFIX:
            operator_check(app.state.settings, header)
            return
        principal = await anyio.to_thread.run_sync(identify, app.state.engine, header)
        slug = unquote(path[len(PROJECTS_PREFIX) + 1 :].split("/", 1)[0])
        if principal.project_slug != slug:
            raise ApiError(404, f"no project {slug!r}")
        scope.setdefault("state", {})["principal"] = principal


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""
