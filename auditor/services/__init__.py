"""Service functions: one function = one unit of work. Shells (CLI, API, workers) call these.

Errors a shell renders for a person: ``NotFound`` (no such project...), ``Conflict`` (the
request contradicts stored state), ``Invalid`` (bad input). Rejected label batches raise
``auditor.ingestion.errors.IngestRejected``, which names rows and fields.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Something a shell shows as it is: the message names what is wrong."""


class NotFound(ServiceError, LookupError):
    pass


class Conflict(ServiceError):
    pass


class Invalid(ServiceError, ValueError):
    pass
