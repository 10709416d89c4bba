"""A cap on request body size, enforced before any route parses the body.

A declared Content-Length over the cap is refused at once; a body without one (chunked) is
counted as it streams and refused as soon as it passes the cap, so a client cannot make the
server buffer an unbounded body either way. The connection stays open: the server discards
the rest of the body as it arrives (a 4xx never costs the client its keep-alive connection).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from auditor.api.errors import error_body


class BodySizeLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send)
            return

        received = 0
        refused = False

        async def limited_receive() -> Message:
            # Past the cap: answer 413 ourselves and tell the app the client went away, so
            # whatever it was parsing stops and its own response is swallowed below.
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    refused = True
                    await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not refused:
                await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not refused:
                raise

    async def _refuse(self, send: Send) -> None:
        message = f"request body is larger than {self.max_bytes} bytes"
        # ``max`` lets a client cut its batches to size without reading the message
        details = [{"field": "body", "message": message, "max": self.max_bytes}]
        body = json.dumps(error_body(413, message, details=details)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
