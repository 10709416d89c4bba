"""Label posts: a batch (``{"labels": [...]}``) or one label, with an optional
Idempotency-Key header."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated

from fastapi import APIRouter, Header, Request, Response

from auditor.api.deps import Ids, Ingester, Slug, WriteUow
from auditor.api.errors import ApiError
from auditor.api.hygiene import CheckedJsonRoute
from auditor.api.schemas import IDEMPOTENCY_KEY_PATTERN, IngestOut, LabelBatch, LabelBody
from auditor.ingestion.batch import FIELDS, RawBatch
from auditor.services.access.keys import Principal
from auditor.services.access.public_ids import PublicIds
from auditor.services.ingest.idempotent_posts import post_labels

router = APIRouter(prefix="/api/v1/projects", tags=["labels"], route_class=CheckedJsonRoute)

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=IDEMPOTENCY_KEY_PATTERN,
        description=(
            "Same key and same body: the first response is replayed and nothing is written. "
            "Same key, another body: 422. Scoped to the project."
        ),
    ),
]


def to_raw_batch(labels: list[LabelBody]) -> RawBatch:
    """Columns straight from the parsed models (rows numbered from 1, as in error details)."""
    columns: dict[str, list[object]] = {name: [] for name in FIELDS}
    for label in labels:
        for name in FIELDS:
            columns[name].append(getattr(label, name))
    optional = {
        name: (columns[name] if any(v is not None for v in columns[name]) else None)
        for name in FIELDS[3:]
    }
    return RawBatch(
        rows=list(range(1, len(labels) + 1)),
        item=columns["item"],
        rater=columns["rater"],
        label=columns["label"],
        **optional,  # type: ignore[arg-type]
    )


def _request_hash(labels: list[LabelBody]) -> str:
    canonical = json.dumps(
        [label.model_dump(mode="json", exclude_none=True) for label in labels],
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _post(
    request: Request,
    response: Response,
    slug: str,
    labels: list[LabelBody],
    uow: WriteUow,
    key: str | None,
    ids: PublicIds,
    who: Principal,
) -> IngestOut:
    cap = request.app.state.settings.api_max_batch_labels
    if len(labels) > cap:
        message = f"{len(labels)} labels in one request; at most {cap}"
        # ``max`` lets a client split the batch without reading the message
        detail = {"field": "labels", "message": message, "max": cap}
        raise ApiError(413, message, code="batch_too_large", details=[detail])
    request_hash = _request_hash(labels) if key is not None else ""
    result = post_labels(
        uow,
        slug,
        to_raw_batch(labels),
        idempotency_key=key,
        request_hash=request_hash,
        created_by=f"key {ids.encode('key', who.project_id, who.key_id)}",  # opaque, as shown
    )
    if result.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    # An opaque id: the global label sequence would tell other tenants' volume.
    shown = ids.maybe("label", who.project_id, result.body.get("max_label_id"))
    batch = ids.maybe("import", who.project_id, result.body.get("import_id"))
    return IngestOut(**{**result.body, "max_label_id": shown, "import_id": batch})


@router.post("/{slug}/labels", response_model=IngestOut)
def post_label_batch(
    request: Request,
    response: Response,
    slug: Slug,
    body: LabelBatch,
    uow: WriteUow,
    who: Ingester,
    ids: Ids,
    idempotency_key: IdempotencyKey = None,
) -> IngestOut:
    """Store a batch of labels, all or nothing (ingest, admin). A bad row is 422 naming the
    row (1-based) and field in ``details``; a repeated client ``key`` counts as a duplicate."""
    return _post(request, response, slug, body.labels, uow, idempotency_key, ids, who)


@router.post("/{slug}/label", response_model=IngestOut)
def post_one_label(
    request: Request,
    response: Response,
    slug: Slug,
    body: LabelBody,
    uow: WriteUow,
    who: Ingester,
    ids: Ids,
    idempotency_key: IdempotencyKey = None,
) -> IngestOut:
    """Store one label (a batch of one)."""
    return _post(request, response, slug, [body], uow, idempotency_key, ids, who)
