"""The JSON routes of an app, for the handlers that answer about routes (405's ``Allow``, the
NUL guard's path details) and for the tests that walk every route."""

from __future__ import annotations

from fastapi.routing import APIRoute
from starlette.routing import BaseRoute


def api_routes(routes: list[BaseRoute]) -> list[APIRoute]:
    """Every JSON route of an app, flattened: recent FastAPI keeps an included router as one
    entry of ``app.routes`` (with the router as ``original_router``), not as its routes."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "original_router"):
            found.extend(api_routes(route.original_router.routes))
    return found
