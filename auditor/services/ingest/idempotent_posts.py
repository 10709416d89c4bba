"""Label posts of the HTTP API with an optional ``Idempotency-Key``.

Without a key this is ``labels.ingest_labels``. With a key, the record of the key and the
labels are written in ONE transaction:

1. insert a pending (project, key, request hash) record, ON CONFLICT DO NOTHING;
2. if it was inserted, write the labels and store the response in the record; commit;
3. if the key was already there, write nothing: the same body replays the stored response,
   another body is ``IdempotencyMismatch``.

Two concurrent requests with one key meet at the unique (project, key): on PostgreSQL the
second insert waits until the first transaction ends and then finds the committed record; on
SQLite writers are serialised by BEGIN IMMEDIATE. A rejected batch rolls its record back with
it, so a corrected retry with the same key is accepted (only successes are remembered).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from auditor.errors import Invalid, WriteConflict
from auditor.ingestion.batch import RawBatch
from auditor.services.ingest.labels import (
    RACE_RETRIES,
    IngestResult,
    ingest_labels,
    write_labels,
)
from auditor.storage.db import utc_now
from auditor.storage.unit_of_work import UnitOfWork


class IdempotencyMismatch(Invalid):
    """The Idempotency-Key was used before with another request body."""

    code = "idempotency_mismatch"


@dataclass(frozen=True)
class PostResult:
    """What the post wrote (or, ``replayed``, what the first post with its key wrote)."""

    body: dict[str, Any]
    replayed: bool


def _body(result: IngestResult) -> dict[str, Any]:
    return asdict(result)


def post_labels(
    uow: UnitOfWork,
    slug: str,
    batch: RawBatch,
    *,
    idempotency_key: str | None = None,
    request_hash: str = "",
    created_by: str = "api",
) -> PostResult:
    """Write one batch (all or nothing), at most once per idempotency key. The batch is
    recorded as an import by ``created_by`` (the key's id)."""
    if idempotency_key is None:
        result = ingest_labels(uow, slug, batch, created_by=created_by)
        return PostResult(_body(result), False)
    for attempt in range(RACE_RETRIES):
        try:
            return _post_once(uow, slug, batch, idempotency_key, request_hash, created_by)
        except WriteConflict:
            if attempt == RACE_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def _post_once(
    uow: UnitOfWork, slug: str, batch: RawBatch, key: str, request_hash: str, created_by: str
) -> PostResult:
    with uow:
        project = uow.require_project(slug)
        if not uow.keys.claim_idempotency_key(project.id, key, request_hash, utc_now()):
            stored = uow.keys.find_idempotency_record(project.id, key)
            if stored is None:  # pragma: no cover - the conflicting row is committed
                raise WriteConflict(f"idempotency key {key!r} vanished")
            stored_hash, response = stored
            if stored_hash != request_hash:
                raise IdempotencyMismatch(
                    f"Idempotency-Key {key!r} was already used with a different request body"
                )
            return PostResult(response, True)
        body = _body(write_labels(uow, project, batch, created_by=created_by))
        uow.keys.finish_idempotency_key(project.id, key, body)
        uow.commit()
    return PostResult(body, False)
