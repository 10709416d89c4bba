"""Service functions: one function = one unit of work. Shells (CLI, API, workers) call these.

Errors a shell renders for a person: ``NotFound`` (no such project...), ``Conflict`` (the
request contradicts stored state), ``Invalid`` (bad input). Rejected label batches raise
``auditor.ingestion.errors.IngestRejected``, which names rows and fields.
"""

from __future__ import annotations

# The classes live in auditor.errors (one module for every layer); these names stay so the
# services' callers keep working while they move over.
from auditor.errors import AuditorError as ServiceError
from auditor.errors import Conflict, Invalid, NotFound

__all__ = ["Conflict", "Invalid", "NotFound", "ServiceError"]
