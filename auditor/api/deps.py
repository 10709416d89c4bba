"""Request dependencies: units of work, and who is calling (key auth and role checks).

Access rules (docs/api.md has the full matrix):

- every route under ``/api/v1/projects/{slug}`` needs ``Authorization: Bearer <key>``; a key
  belongs to one project, and a slug other than the key's answers 404 exactly as an unknown
  slug does, so a key cannot learn which other projects exist;
- ids in the path are looked up inside the key's project only (another project's id: 404);
- a role that may not use a route gets 403 (the project is the caller's own: nothing leaks);
- ``POST /api/v1/projects`` takes the operator token (``AUDITOR_ADMIN_TOKEN``) instead.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from auditor.api.errors import ApiError
from auditor.config import Settings
from auditor.services.keys import Principal, Role, authenticate, record_use
from auditor.storage.unit_of_work import UnitOfWork

bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer aud_...`")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
Slug = Annotated[str, Path(min_length=1, max_length=64, description="project slug")]

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


def write_uow(request: Request) -> UnitOfWork:
    return UnitOfWork(request.app.state.engine)


def read_uow(request: Request) -> UnitOfWork:
    return UnitOfWork(request.app.state.engine, read_only=True)


WriteUow = Annotated[UnitOfWork, Depends(write_uow)]
ReadUow = Annotated[UnitOfWork, Depends(read_uow)]


def _principal(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Principal:
    if credentials is None or not credentials.credentials:
        message = "an API key is required: Authorization: Bearer <key>"
        raise ApiError(401, message, headers=_CHALLENGE)
    engine = request.app.state.engine
    principal = authenticate(UnitOfWork(engine, read_only=True), credentials.credentials)
    if principal is None:
        raise ApiError(401, "the API key is unknown or revoked", headers=_CHALLENGE)
    if principal.use_due:
        record_use(UnitOfWork(engine), principal.key_id)
    return principal


def allow(*roles: Role) -> Callable[..., Principal]:
    """A dependency: the caller's key, of one of ``roles``, for the project in the path."""

    def check(request: Request, slug: Slug, credentials: Credentials) -> Principal:
        principal = _principal(request, credentials)
        if principal.project_slug != slug:
            raise ApiError(404, f"no project {slug!r}")
        if principal.role not in roles:
            allowed = ", ".join(role.value for role in roles)
            raise ApiError(403, f"a {principal.role.value} key cannot do this (needs {allowed})")
        return principal

    return check


ANY_ROLE = (Role.INGEST, Role.READ, Role.ADMIN)
Anyone = Annotated[Principal, Depends(allow(*ANY_ROLE))]
Reader = Annotated[Principal, Depends(allow(Role.READ, Role.ADMIN))]
Ingester = Annotated[Principal, Depends(allow(Role.INGEST, Role.ADMIN))]
Admin = Annotated[Principal, Depends(allow(Role.ADMIN))]


def operator(request: Request, credentials: Credentials) -> None:
    """The operator token of ``AUDITOR_ADMIN_TOKEN``; unset, the route is closed."""
    if credentials is None:
        raise ApiError(401, "the operator token is required", headers=_CHALLENGE)
    token = settings(request).admin_token
    if token is None:
        raise ApiError(403, "project creation over HTTP is disabled (AUDITOR_ADMIN_TOKEN unset)")
    if not hmac.compare_digest(credentials.credentials.encode(), token.get_secret_value().encode()):
        raise ApiError(401, "the operator token is wrong", headers=_CHALLENGE)


Operator = Annotated[None, Depends(operator)]
