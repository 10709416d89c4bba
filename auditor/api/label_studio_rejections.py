"""Count the Label Studio webhook calls the API refuses, whatever refused them.

Label Studio posts each event once and never retries, so each call answered with an error is a
change lost until a sync. The refusal may come from any layer: no key or an unknown one (401,
decided from the headers before the body is read), a key of another role (403), a body that
is not an event (400, 422), a label the project does not have (422), a busy database (503).
This middleware sits outside them all and counts every answer of that route with a status of
400 or more per project (``services.label_studio.rejections``), with the error's message, after
the answer is sent.
"""

from __future__ import annotations

import json
from urllib.parse import unquote

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from auditor.api.deps import PROJECTS_PREFIX
from auditor.api.routes.integrations import LABEL_STUDIO_PATH
from auditor.services.label_studio.rejections import record_rejection
from auditor.storage.unit_of_work import UnitOfWork

BODY_KEPT = 4096


def _slug(scope: Scope) -> str | None:
    """The project of a POST to the Label Studio route, else None."""
    if scope["type"] != "http" or scope.get("method") != "POST":
        return None
    path: str = scope.get("path", "")
    if not (path.startswith(PROJECTS_PREFIX + "/") and path.endswith(LABEL_STUDIO_PATH)):
        return None
    slug = path[len(PROJECTS_PREFIX) + 1 : -len(LABEL_STUDIO_PATH)]
    return unquote(slug) if slug and "/" not in slug else None


def _message(body: bytes) -> str:
    try:
        found = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace")
    return str(found)


class LabelStudioRejectionsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        slug = _slug(scope)
        if slug is None:
            await self.app(scope, receive, send)
            return
        status = 0
        body = bytearray()

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and len(body) < BODY_KEPT:
                body.extend(message.get("body", b"")[: BODY_KEPT - len(body)])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if status == 0 or status >= 400:  # 0: failed before answering
                engine = scope["app"].state.engine
                message = _message(bytes(body)) if body else "no answer"
                await anyio.to_thread.run_sync(
                    record_rejection, UnitOfWork(engine), slug, status or 500, message
                )
