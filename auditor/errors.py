"""The errors a person sees, for every layer: each carries a stable ``code`` and, when one input
is at fault, the ``field`` that names it.

The API maps them to a status by type (``auditor.api.errors``) and the CLI to a message and an
exit code (``auditor.cli._common``), each in one place. Lower layers raise them too (or
subclass them: ``IngestRejected``, ``FileFormatError``, ``TargetRefused``, ``WriteConflict``...),
so the module sits beside ``auditor.domain`` at the bottom of the layers and imports nothing of
ours.

    AuditorError            the message names what is wrong           API 400, CLI exit 1
        NotFound            no such project, rater, snapshot...        API 404
        Conflict            contradicts stored state                   API 409
        Invalid             bad input; ``field`` names it              API 422
        Failure             the work failed, not the input             API 500 (logged)
            WriteConflict       a concurrent transaction got in the way    API 500 (logged)
            DatabaseBusy        the write lock was not had in time         API 503 database_busy
            DatabaseUnavailable the database cannot be reached             API 503 unavailable

The storage layer translates the drivers' errors into the last three once, where they leave it
(``auditor.storage.db.driver_errors_translated``: by type and code, never by message text), so
the shells map them by type alone.
"""

from __future__ import annotations

from typing import Any, TypeVar

EXCERPT_CHARACTERS = 40

E = TypeVar("E", bound=BaseException)


def excerpt(value: object, limit: int = EXCERPT_CHARACTERS) -> str:
    """A short, escaped excerpt of some input for a message: its ``repr`` (CR, LF, NUL and
    other unprintable characters escaped) cut to ``limit`` characters and, when cut, how long
    the whole was. Error bodies never echo more of what a client sent."""
    text = repr(value)
    if len(text) <= limit + 2:
        return text
    if isinstance(value, list | tuple | dict):
        return f"{text[:limit]}... ({len(value)} entries)"
    return f"{text[:limit]}... ({len(value) if isinstance(value, str) else len(text)} characters)"


def shown_name(value: str, limit: int = 64) -> str:
    """``value`` itself when it is short and printable (a name echoed as data), else its
    ``excerpt``."""
    return value if len(value) <= limit and value.isprintable() else excerpt(value)


def typed_cause(error: BaseException, kinds: tuple[type[E], ...]) -> E | None:
    """``error`` itself or the first error of its chain (``__cause__``, then ``__context__``;
    bounded) that is one of ``kinds``, by type alone: a shell finds a typed database error
    that a service let through or wrapped."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(seen) < 20 and not any(current is s for s in seen):
        if isinstance(current, kinds):
            return current
        seen.append(current)
        current = current.__cause__ or current.__context__
    return None


class AuditorError(Exception):
    """Something a shell shows as it is: the message names what is wrong."""

    code = "error"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code

    def details(self) -> list[dict[str, Any]]:
        """Where the problem is (the API's ``details``): the field when one is at fault."""
        return [{"field": self.field, "message": self.message}] if self.field else []


class NotFound(AuditorError, LookupError):
    code = "not_found"


class Conflict(AuditorError):
    """The request contradicts stored state."""

    code = "conflict"


class Invalid(AuditorError, ValueError):
    """Bad input; ``field`` names it when one field is at fault."""

    code = "invalid"


class Failure(AuditorError, RuntimeError):
    """The work failed for a reason outside its input (a concurrent write got in the way, the
    database went away, a recompute raised); nothing was written. The CLI shows the message
    to its operator; the API logs it and answers 500, as for any internal error."""

    code = "failed"


class WriteConflict(Failure):
    """A concurrent transaction got in the way (a deadlock, or one of this batch's client keys
    inserted first). The transaction is lost; running it again resolves the conflict."""


class DatabaseBusy(Failure):
    """Another writer held the lock past the wait (SQLite's busy timeout, PostgreSQL's
    lock_timeout). Nothing was written; retrying later succeeds. The message is the driver's."""

    code = "database_busy"


class DatabaseUnavailable(Failure):
    """The database cannot be reached: the connect was refused or timed out, or the server
    went away or is shutting down. Retrying later may succeed. The message is the driver's."""

    code = "unavailable"
