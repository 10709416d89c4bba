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
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from auditor.api.errors import ApiError
from auditor.config import Settings
from auditor.services.access.keys import Principal, Role, authenticate, record_use
from auditor.services.access.public_ids import LIMIT, PublicIds, load_public_ids
from auditor.storage.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from auditor.storage.db import Engine

bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer aud_...`")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
Slug = Annotated[str, Path(min_length=1, max_length=64, description="project slug")]

_CHALLENGE = {"WWW-Authenticate": "Bearer"}
PROJECTS_PREFIX = "/api/v1/projects"


def settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


def write_uow(request: Request) -> UnitOfWork:
    return UnitOfWork(request.app.state.engine)


def read_uow(request: Request) -> UnitOfWork:
    return UnitOfWork(request.app.state.engine, read_only=True)


WriteUow = Annotated[UnitOfWork, Depends(write_uow)]
ReadUow = Annotated[UnitOfWork, Depends(read_uow)]


def public_ids(request: Request) -> PublicIds:
    """The deployment's opaque-id permutation (``auditor.services.access.public_ids``), loaded
    once."""
    found = getattr(request.app.state, "public_ids", None)
    if found is None:
        found = load_public_ids(UnitOfWork(request.app.state.engine))
        request.app.state.public_ids = found
    return found  # type: ignore[no-any-return]


Ids = Annotated[PublicIds, Depends(public_ids)]
OPAQUE_MAX = LIMIT - 1


def bearer_value(header: str) -> str | None:
    """The credentials of an ``Authorization: Bearer <value>`` header; None for any other
    scheme or an empty value."""
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    return value if scheme.lower() == "bearer" and value else None


def identify(engine: Engine, header: str) -> Principal:
    """The key of an Authorization header, from the headers alone (401 if there is none, or
    it is unknown or revoked). Called before the body is read (``auth_first``)."""
    secret = bearer_value(header)
    if secret is None:
        message = "an API key is required: Authorization: Bearer <key>"
        raise ApiError(401, message, headers=_CHALLENGE)
    principal = authenticate(UnitOfWork(engine, read_only=True), secret)
    if principal is None:
        raise ApiError(401, "the API key is unknown or revoked", headers=_CHALLENGE)
    if principal.use_due:
        record_use(UnitOfWork(engine), principal.key_id)
    return principal


def _principal(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Principal:
    found = request.scope.get("state", {}).get("principal")
    if isinstance(found, Principal):  # authenticated before the body was read
        return found
    header = "" if credentials is None else f"Bearer {credentials.credentials}"
    return identify(request.app.state.engine, header)


def caller(request: Request, credentials: Credentials) -> Principal:
    """The caller's key, of any role and project (``GET /api/v1/key``)."""
    return _principal(request, credentials)


def allow(*roles: Role) -> Callable[..., Principal]:
    """A dependency: the caller's key, of one of ``roles``, for the project in the path."""

    def check(request: Request, slug: Slug, credentials: Credentials) -> Principal:
        principal = _principal(request, credentials)
        if principal.project_slug != slug:
            raise ApiError(404, f"no project {slug!r}")
        if principal.role not in roles:
            allowed = ", ".join(role.value for role in roles)
            role = principal.role.value
            an = "an" if role[:1] in "aeiou" else "a"  # "an admin key", "a label-studio key"
            raise ApiError(403, f"{an} {role} key cannot do this (needs {allowed})")
        return principal

    return check


ANY_ROLE = (Role.INGEST, Role.READ, Role.ADMIN)
Anyone = Annotated[Principal, Depends(allow(*ANY_ROLE))]
Reader = Annotated[Principal, Depends(allow(Role.READ, Role.ADMIN))]
Ingester = Annotated[Principal, Depends(allow(Role.INGEST, Role.ADMIN))]
Admin = Annotated[Principal, Depends(allow(Role.ADMIN))]
# Label Studio's webhook takes a key made for it, and that key opens nothing else.
LabelStudioKey = Annotated[Principal, Depends(allow(Role.LABEL_STUDIO))]


def operator_check(settings: Settings, header: str) -> None:
    """The operator token of ``AUDITOR_ADMIN_TOKEN``; unset, the route is closed."""
    given = bearer_value(header)
    if given is None:
        raise ApiError(401, "the operator token is required", headers=_CHALLENGE)
    token = settings.admin_token
    if token is None:
        raise ApiError(403, "project creation over HTTP is disabled (AUDITOR_ADMIN_TOKEN unset)")
    if not hmac.compare_digest(given.encode(), token.get_secret_value().encode()):
        raise ApiError(401, "the operator token is wrong", headers=_CHALLENGE)


def operator(request: Request, credentials: Credentials) -> None:
    header = "" if credentials is None else f"Bearer {credentials.credentials}"
    operator_check(settings(request), header)


Operator = Annotated[None, Depends(operator)]
