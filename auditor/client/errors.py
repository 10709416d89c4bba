"""The API's error answers as the project's own exceptions (``auditor.errors``).

An answer ``{"error": {"code", "message", "details"}}`` becomes the class the server mapped
from (404 ``NotFound``, 409 ``Conflict``, 422 ``Invalid``, 5xx ``Failure``, any other
``AuditorError``) with the same ``code``, ``field`` (the first detail's, or the last part of
its ``location``) and ``details()`` (the API's list, rows and fields as it gave them). So a
pipeline catches ``auditor.errors.Invalid`` whether the check ran here or on the server.
"""

from __future__ import annotations

import json
from typing import Any

from auditor.errors import AuditorError, Conflict, Failure, Invalid, NotFound


class RemoteError(AuditorError):
    """An error the service answered (``status``, ``code``, ``details()`` as it sent them),
    or a failure to reach it (``status`` None)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        code: str,
        field: str | None = None,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message, field=field, code=code)
        self.status = status
        self._details = details or []

    def details(self) -> list[dict[str, Any]]:
        return list(self._details)

    def __str__(self) -> str:
        lines = [self.message]
        lines += [f"  {_detail_line(d)}" for d in self._details[:20] if d.get("message")]
        if len(self._details) > 20:
            lines.append(f"  ... and {len(self._details) - 20} more")
        return "\n".join(lines)


class RemoteNotFound(RemoteError, NotFound):
    pass


class RemoteConflict(RemoteError, Conflict):
    pass


class RemoteInvalid(RemoteError, Invalid):
    pass


class RemoteFailure(RemoteError, Failure):
    """The service failed (5xx after the retries), or could not be reached (``status``
    None, ``code`` ``unreachable``)."""


class LabelsRejected(RemoteInvalid):
    """A batch of ``post_labels`` was refused, and nothing of it written. ``details()`` name
    rows by their place in the labels given to ``post_labels`` (1-based), not in the batch.
    The batches before it are stored: ``stored`` says what they wrote."""

    def __init__(self, cause: RemoteError, offset: int, count: int, stored: object) -> None:
        details = [
            {**d, "row": d["row"] + offset} if isinstance(d.get("row"), int) else d
            for d in cause.details()
        ]
        where = f"labels {offset + 1}-{offset + count}"
        before = f"; labels 1-{offset} are stored" if offset else ""
        super().__init__(
            f"{cause.message} ({where}{before})",
            status=cause.status, code=cause.code, field=cause.field, details=details,
        )  # fmt: skip
        self.stored = stored


def _detail_line(detail: dict[str, Any]) -> str:
    where = []
    if "row" in detail:
        where.append(f"row {detail['row']}")
    if detail.get("field"):
        where.append(str(detail["field"]))
    elif detail.get("location"):
        where.append(".".join(str(part) for part in detail["location"]))
    return f"{', '.join(where)}: {detail['message']}" if where else str(detail["message"])


def _field(details: list[dict[str, Any]]) -> str | None:
    for detail in details:
        if detail.get("field"):
            return str(detail["field"])
        location = detail.get("location")  # ["query", "scope", "0"]: the parameter's name
        names = [str(p) for p in location or () if not str(p).isdigit()]
        if len(names) > 1:
            return names[-1]
    return None


_BY_STATUS: dict[int, type[RemoteError]] = {
    404: RemoteNotFound,
    409: RemoteConflict,
    422: RemoteInvalid,
}


def error_from(status: int, content: bytes, reason: str = "") -> RemoteError:
    """The exception for an error answer (any body: a proxy's HTML page too)."""
    try:
        body = json.loads(content)
        error = body["error"]
        code, message = str(error["code"]), str(error["message"])
        details = [d for d in error.get("details") or [] if isinstance(d, dict)]
    except (ValueError, KeyError, TypeError):
        code = "unavailable" if status in (502, 503, 504) else "error"
        excerpt = content[:200].decode("utf-8", "replace").strip()
        message = f"HTTP {status} {reason}".strip() + (f": {excerpt}" if excerpt else "")
        details = []
    kind = RemoteFailure if status >= 500 else _BY_STATUS.get(status, RemoteError)
    return kind(message, status=status, code=code, field=_field(details), details=details)


def unreachable(url: str, error: Exception, attempts: int, maybe_done: bool) -> RemoteFailure:
    """The service could not be reached or its answer was lost. ``maybe_done``: the request
    went out and is not one the client may repeat (no idempotency key), so it may have been
    done: the caller must look before trying it again."""
    what = type(error).__name__
    text = f"{url}: {error or what} ({what}, {attempts} attempt(s))"
    if maybe_done:
        text += "; the request was sent and may have been done: check before repeating it"
    return RemoteFailure(text, status=None, code="unreachable")
