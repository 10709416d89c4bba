"""Input hygiene before a request reaches a route: NUL characters and duplicate JSON keys.

PostgreSQL cannot store U+0000 in text, so a NUL that reached a query was a 500 (and the
500 closed the connection). It is refused up front instead, naming where it is:

- in the path or the query string: ``NulGuardMiddleware`` answers 422 naming the path
  parameter or the query parameter;
- in a JSON body: ``CheckedJsonRoute`` parses the body itself and answers 422 naming the
  location (``["body", "labels", 3, "item"]``, with the row and field of a label), or 400
  when an object repeats a key (``{"a": 1, "a": 2}`` silently meant the last one before).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from auditor.api.errors import BodyRejected, send_error
from auditor.api.routing import api_routes

NUL = "\x00"
NUL_MESSAGE = "contains the NUL character U+0000, which is not allowed"


class NulGuardMiddleware:
    """422 for a NUL anywhere in the path or the query string, naming the parameter."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            details = _path_details(scope) + _query_details(scope)
            if details:
                where = ", ".join("/".join(str(p) for p in d["location"]) for d in details)
                await send_error(send, 422, f"{where} {NUL_MESSAGE}", details=details)
                return
        await self.app(scope, receive, send)


def _path_details(scope: Scope) -> list[dict[str, Any]]:
    path: str = scope.get("path", "")
    if NUL not in path:
        return []
    for route in api_routes(scope["app"].routes):
        match = route.path_regex.match(path)
        if match is not None:
            names = [name for name, value in match.groupdict().items() if NUL in value]
            return [{"location": ["path", name], "message": NUL_MESSAGE} for name in names]
    return [{"location": ["path"], "message": NUL_MESSAGE}]


def _query_details(scope: Scope) -> list[dict[str, Any]]:
    raw = scope.get("query_string", b"").decode("latin-1")
    if "%00" not in raw and NUL not in raw:
        return []
    pairs = parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace")
    names = sorted({name for name, value in pairs if NUL in name or NUL in value})
    return [{"location": ["query", name], "message": NUL_MESSAGE} for name in names]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise BodyRejected(400, f"the JSON body repeats the key {key!r} in one object")
        found[key] = value
    return found


def _nul_locations(value: Any, where: list[str | int]) -> list[list[str | int]]:
    if isinstance(value, str):
        return [where] if NUL in value else []
    found: list[list[str | int]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if NUL in key:
                found.append([*where, key])
            found.extend(_nul_locations(inner, [*where, key]))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.extend(_nul_locations(inner, [*where, index]))
    return found


def _detail(location: list[str | int]) -> dict[str, Any]:
    detail: dict[str, Any] = {"location": [str(p) for p in location], "message": NUL_MESSAGE}
    # A label of a batch: name the row (1-based, as content errors do) and the field.
    if len(location) >= 3 and location[1] == "labels" and isinstance(location[2], int):
        detail["row"] = location[2] + 1
        if len(location) >= 4:
            detail["field"] = str(location[3])
    elif len(location) == 2:
        detail["field"] = str(location[1])
    return detail


def parse_json(body: bytes) -> Any:
    """The JSON of ``body``, refusing repeated keys (400) and NUL characters (422)."""
    value = json.loads(body, object_pairs_hook=_unique_keys)
    # JSON spells U+0000 only as an escape; without one there is nothing to walk.
    if b"\\u0000" in body:
        locations = _nul_locations(value, ["body"])
        if locations:
            details = [_detail(location) for location in locations[:20]]
            shown = "/".join(str(p) for p in locations[0])
            raise BodyRejected(422, f"{shown} {NUL_MESSAGE}", details=details)
    return value


NO_NUL_PATTERN = "^[^\\x00]*$"
_ERROR_SCHEMAS = ("Error", "HTTPValidationError", "ValidationError")


def _no_nul(schema: Any) -> None:
    if isinstance(schema, list):
        for inner in schema:
            _no_nul(inner)
        return
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "string" and not {"pattern", "enum", "const", "format"} & set(schema):
        schema["pattern"] = NO_NUL_PATTERN
    for inner in schema.values():
        _no_nul(inner)


def document_nul_refusal(document: dict[str, Any]) -> dict[str, Any]:
    """Say in the OpenAPI document what the guards enforce: a string parameter or body field
    without a pattern of its own gets one that excludes U+0000 (the patterns of their own
    exclude it already), so a client generating schema-valid data never sends a NUL."""
    for methods in document.get("paths", {}).values():
        for operation in methods.values():
            _no_nul(operation.get("parameters", []))
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        if not name.startswith(_ERROR_SCHEMAS):
            _no_nul(schema)
    return document


class _CheckedJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_json(await self.body())
        return self._json


class CheckedJsonRoute(APIRoute):
    """A route whose JSON body goes through ``parse_json``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            return await handler(_CheckedJsonRequest(request.scope, request.receive))

        return checked
