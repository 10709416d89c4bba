"""Posting any number of labels: batches of at most the server's limit, each with its own
Idempotency-Key, so a batch repeated after a lost answer is replayed, never written twice.

A batch's key is ``<base>.<first>-<end>``: the base (given, or random per call) and the
batch's place in the labels given (0-based, end exclusive). A batch the server refuses as too
large (413) is split and its halves get keys of their own places; the client remembers the
limit the server named for the next batches. So a pipeline that posts the same labels again
with the same ``idempotency_key`` and ``batch_size`` (after a crash, say) replays what was
stored and writes only the rest.
"""

from __future__ import annotations

import itertools
import json
import math
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from auditor.client.errors import LabelsRejected, RemoteError, RemoteInvalid, error_from
from auditor.client.exchange import Call, Plan, Reply
from auditor.client.records import Label, PostResult
from auditor.client.retry import Safety

DEFAULT_BATCH_LABELS = 10_000  # AUDITOR_API_MAX_BATCH_LABELS's default
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024  # AUDITOR_API_MAX_BODY_BYTES's default
KEY_BASE_MAX = 160  # the server takes keys of up to 200 characters; the place takes the rest
JSON_HEADERS = {"Content-Type": "application/json"}

LabelLike = Label | Mapping[str, Any]


@dataclass
class Limits:
    """The server's limits as this client knows them (the defaults, then what a 413 said)."""

    batch_labels: int = DEFAULT_BATCH_LABELS
    body_bytes: int = DEFAULT_MAX_BODY_BYTES


@dataclass
class _Totals:
    labels: int = 0
    inserted: int = 0
    duplicates: int = 0
    batches: int = 0
    replayed: int = 0
    import_ids: list[int] = field(default_factory=list)

    def add(self, labels: int, reply: Reply) -> None:
        answer = reply.json()
        self.labels += labels
        self.inserted += answer["inserted"]
        self.duplicates += answer["duplicates"]
        self.batches += 1
        self.replayed += reply.replayed
        if answer.get("import_id") is not None:
            self.import_ids.append(answer["import_id"])

    def result(self) -> PostResult:
        fields = asdict(self)
        return PostResult(**{**fields, "import_ids": tuple(self.import_ids)})


def _jsonable(value: object) -> object:
    """What json cannot write itself: a ``Label`` or another mapping (a plain dict is written
    as it is, without a Python call per label), times (ISO 8601; a naive one is read as UTC
    by the server) and NumPy or pandas scalars (a DataFrame's ``to_dict("records")``)."""
    if isinstance(value, Label):
        return {k: v for k, v in asdict(value).items() if v is not None}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not a label or a label field value")


def encode(rows: list[LabelLike]) -> bytes:
    try:
        text = json.dumps({"labels": rows}, default=_jsonable, allow_nan=False,
                          separators=(",", ":"), ensure_ascii=False)  # fmt: skip
    except (TypeError, ValueError) as error:
        raise _unwritable(rows, error) from None
    return text.encode()


def _unwritable(rows: list[LabelLike], error: Exception) -> RemoteInvalid:
    """Name the row and field json refused (NaN, an object), as the server would, before
    anything is sent."""
    for number, label in enumerate(rows, start=1):
        try:
            row: Any = label if isinstance(label, dict) else _jsonable(label)
        except TypeError as found:
            message = str(found)
            return RemoteInvalid(message, status=None, code="invalid",
                                 details=[{"row": number, "message": message}])  # fmt: skip
        for name, value in row.items():
            try:
                json.dumps(value, default=_jsonable, allow_nan=False)
            except (TypeError, ValueError) as found:
                message = f"{name}: {found}" + (
                    " (a missing value: leave the field out or use None)"
                    if isinstance(value, float) and math.isnan(value)
                    else ""
                )
                detail = {"row": number, "field": name, "message": message}
                return RemoteInvalid(message, status=None, code="invalid", field=name,
                                     details=[detail])  # fmt: skip
    return RemoteInvalid(str(error), status=None, code="invalid")


def key_base(idempotency_key: str | None) -> str:
    if idempotency_key is None:
        return uuid.uuid4().hex
    if (
        not idempotency_key
        or len(idempotency_key) > KEY_BASE_MAX
        or not all("\x21" <= c <= "\x7e" for c in idempotency_key)
    ):
        raise RemoteInvalid(
            f"idempotency_key: 1-{KEY_BASE_MAX} visible ASCII characters",
            status=None, code="invalid", field="idempotency_key",
        )  # fmt: skip
    return idempotency_key


def _chunks(labels: Iterable[LabelLike], size: int) -> Iterator[list[LabelLike]]:
    found = iter(labels)
    while chunk := list(itertools.islice(found, size)):
        yield chunk


def post_labels(
    path: str,
    limits: Limits,
    labels: Iterable[LabelLike],
    batch_size: int | None,
    idempotency_key: str | None,
) -> Plan[PostResult]:
    if batch_size is not None and batch_size < 1:
        raise RemoteInvalid("batch_size must be at least 1", status=None, code="invalid",
                            field="batch_size")  # fmt: skip
    poster = _Poster(path, limits, key_base(idempotency_key))
    size = min(batch_size or limits.batch_labels, limits.batch_labels)
    offset = 0
    for chunk in _chunks(labels, size):
        yield from poster.post(chunk, offset)
        offset += len(chunk)
    return poster.totals.result()


@dataclass
class _Poster:
    """The batches of one ``post_labels`` call: where they go, the limits, the key base, and
    what the server answered so far."""

    path: str
    limits: Limits
    base: str
    totals: _Totals = field(default_factory=_Totals)

    def post(self, rows: list[LabelLike], offset: int) -> Plan[None]:
        """One batch (rows ``offset``..), split while the server's limits say it is too big."""
        limits = self.limits
        if len(rows) > limits.batch_labels:
            yield from self.split(rows, offset, limits.batch_labels)
            return
        try:
            body = encode(rows)
        except RemoteInvalid as error:
            raise LabelsRejected(error, offset, len(rows), self.totals.result()) from None
        if len(body) > limits.body_bytes and len(rows) > 1:
            yield from self.split(rows, offset, math.ceil(len(rows) / 2))
            return
        key = f"{self.base}.{offset}-{offset + len(rows)}"
        call = Call("POST", self.path, Safety.KEYED, body=body,
                    headers={**JSON_HEADERS, "Idempotency-Key": key},
                    passthrough=frozenset({413}))  # fmt: skip
        try:
            reply = yield call
        except RemoteInvalid as error:  # name the rows by their place in the caller's labels
            raise LabelsRejected(error, offset, len(rows), self.totals.result()) from None
        if reply.status == 413:
            _learn_limit(limits, reply, rows, len(body))
            yield from self.post(rows, offset)
            return
        self.totals.add(len(rows), reply)

    def split(self, rows: list[LabelLike], offset: int, size: int) -> Plan[None]:
        for start in range(0, len(rows), size):
            yield from self.post(rows[start : start + size], offset + start)


def _learn_limit(limits: Limits, reply: Reply, rows: list[LabelLike], body: int) -> None:
    """A 413: the batch limit the server names (``details[0].max``), or, for the body size,
    less than this body. One label too large is the caller's error."""
    error: RemoteError = error_from(reply.status, reply.content)
    if len(rows) <= 1:
        raise error
    named = next((d["max"] for d in error.details() if isinstance(d.get("max"), int)), 0)
    if error.code == "batch_too_large":
        limits.batch_labels = max(1, min(named or len(rows) // 2, len(rows) - 1))
    else:  # the body: as the server names it, else less than this one
        limits.body_bytes = max(1, min(named or body - 1, body - 1))
