"""Service functions: one function = one unit of work. Shells (CLI, API, workers) call these.

Errors a shell renders for a person are ``auditor.errors``' (imported from there, by every
layer): ``NotFound`` (no such project...), ``Conflict`` (the request contradicts stored state),
``Invalid`` (bad input). Rejected label batches raise
``auditor.ingestion.errors.IngestRejected``, which names rows and fields.
"""
