"""The errors a person sees, for every layer: each carries a stable ``code`` and, when one input
is at fault, the ``field`` that names it.

The API maps them to a status by type (``auditor.api.errors``) and the CLI to a message and an
exit code (``auditor.cli._common``), each in one place. Lower layers raise them too, so the
module sits beside ``auditor.domain`` at the bottom of the layers and imports nothing of ours.
"""

from __future__ import annotations


class AuditorError(Exception):
    """Something a shell shows as it is: the message names what is wrong."""

    code = "error"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code


class NotFound(AuditorError, LookupError):
    code = "not_found"


class Conflict(AuditorError):
    """The request contradicts stored state."""

    code = "conflict"


class Invalid(AuditorError, ValueError):
    """Bad input; ``field`` names it when one field is at fault."""

    code = "invalid"
