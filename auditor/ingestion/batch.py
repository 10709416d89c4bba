"""Normalise and validate a whole batch of labels before anything is written.

A batch is columnar (one list per field) because files and requests arrive as rows of the
same few fields, and most columns hold few distinct values (10 raters, 4 categories): each
distinct value is checked once, and a column that needs no change is passed on as it is.
No per-row Python objects, no database: the checks that need stored state (a rater whose
stored kind differs, a client key already used) live in the ingest service.

Rules (the README's import format):
- item, rater, label: required; session, labeled_at, rater_kind, key: optional (empty = absent);
- ids (item, rater, session, key) are text or integers, trimmed, NFC-normalised, at most 200
  characters, no control, bidi-control or zero-width characters (``text``); a label must
  name one of the project's categories exactly;
- labeled_at is ISO 8601 (``2024-05-01T10:00:00Z``, offsets allowed); a timestamp without a
  zone is read as UTC; absent means "when received";
- rater_kind is ``human`` or ``model``; one rater keeps one kind;
- a client key repeated in a batch with the same content is a duplicate, with other content
  a conflict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np

from auditor.domain import (
    EARLIEST_MICROS,
    LATEST_MICROS,
    RaterKind,
    parse_timestamp,
    time_out_of_range,
    to_micros,
)
from auditor.ingestion.errors import IngestRejected, RowError, shown
from auditor.ingestion.text import FORBIDDEN_CLASS, forbidden_character, nfc

FIELDS = ("item", "rater", "label", "session", "labeled_at", "rater_kind", "key")
REQUIRED_FIELDS = ("item", "rater", "label")
ID_MAX = 200
TIMESTAMP_MAX = 64

# Controls, bidi controls, zero-width characters (``text``), and lone surrogates: what a file
# that is not UTF-8 decodes to.
_BAD_CHARACTER = re.compile(f"[{FORBIDDEN_CLASS}\\ud800-\\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")

Normalised = tuple[object, str | None]  # (value, error message or None)
# The common timestamp shape, whole seconds in UTC, matched over a whole column at once.
_PLAIN_UTC = re.compile(r"^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$", re.MULTILINE)


@dataclass
class RawBatch:
    """Rows as they arrived, column by column; an optional column absent from the input is
    None. ``errors`` holds rows the reader could not even split into fields."""

    rows: list[int]
    item: list[object]
    rater: list[object]
    label: list[object]
    session: list[object] | None = None
    labeled_at: list[object] | None = None
    rater_kind: list[object] | None = None
    key: list[object] | None = None
    errors: list[RowError] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows) + len({error.row for error in self.errors})

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, object]], first_row: int = 1) -> RawBatch:
        """A batch from dicts (a JSON request); row numbers count from ``first_row``."""
        batch = cls(rows=[], item=[], rater=[], label=[])
        present = {name for record in records for name in record if name in FIELDS}
        for name in FIELDS[3:]:
            if name in present:
                setattr(batch, name, [])
        for offset, record in enumerate(records):
            row = first_row + offset
            unknown = sorted(str(name) for name in record if name not in FIELDS)
            if unknown:
                batch.errors.append(RowError(row, None, f"unknown field(s) {', '.join(unknown)}"))
                continue
            batch.rows.append(row)
            for name in FIELDS:
                column = getattr(batch, name)
                if column is not None:
                    column.append(record.get(name))
        return batch


@dataclass
class ValidBatch:
    """Normalised rows of a batch that passed every check. labeled_at holds microseconds
    since the epoch, None where the row gave none. ``duplicate_rows`` are positions of rows
    that repeat an earlier row's client key and content: they are counted, not written."""

    rows: list[int]
    item: list[str]
    rater: list[str]
    label: list[str]
    session: list[str | None] | None
    labeled_at: list[int | None] | None
    rater_kind: list[RaterKind | None] | None
    key: list[str | None] | None
    duplicate_rows: set[int] = field(default_factory=set)
    # Set by the column-wise validator: columns as codes (``auditor.ingestion.columnar``).
    coded: dict[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.rows)


def _normalise_id(value: object, required: bool) -> Normalised:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    elif value is None:
        return None, "is missing" if required else None
    elif not isinstance(value, str):
        return None, f"must be text or an integer, got {type(value).__name__}"
    text = value.strip()
    if not text:
        return None, "is empty" if required else None
    if len(text) > ID_MAX:
        return None, f"is {len(text)} characters long (at most {ID_MAX})"
    bad = _BAD_CHARACTER.search(text)
    if bad is not None:
        if _SURROGATE.search(text):
            return None, "is not valid UTF-8 (files must be UTF-8 encoded)"
        return None, f"contains {forbidden_character(text)}, which is not allowed"
    return nfc(text), None


def _required_id(value: object) -> Normalised:
    return _normalise_id(value, required=True)


def _optional_id(value: object) -> Normalised:
    return _normalise_id(value, required=False)


def _label_checker(categories: Sequence[str]) -> Callable[[object], Normalised]:
    known = set(categories)
    listing = ", ".join(categories[:20]) + (", ..." if len(categories) > 20 else "")

    def check(value: object) -> Normalised:
        text, error = _normalise_id(value, required=True)
        if error is not None:
            return None, error
        if text not in known:
            return None, f"unknown category {shown(text)} (the project has: {listing})"
        return text, None

    return check


def _timestamp(value: object) -> Normalised:
    if value is None or value == "":
        return None, None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None, None
        if len(text) > TIMESTAMP_MAX:
            return None, f"is {len(text)} characters long: not a timestamp"
        try:
            moment = parse_timestamp(text)
        except ValueError as error:
            return None, f"{shown(text)}: {error}"
    else:
        return None, f"must be an ISO 8601 text, got {type(value).__name__}"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    out_of_range = time_out_of_range(moment)
    if out_of_range is not None:
        return None, out_of_range
    return to_micros(moment), None


def _rater_kind(value: object) -> Normalised:
    if value is None or value == "":
        return None, None
    if isinstance(value, str):
        try:
            return RaterKind(value.strip().lower()), None
        except ValueError:
            pass
    return None, f"must be 'human' or 'model', got {shown(value)}"


def _normalise_column(
    values: list[object],
    rows: list[int],
    name: str,
    normalise: Callable[[object], Normalised],
    errors: list[RowError],
) -> list[object]:
    """Normalise one column, checking each distinct value once when all are text."""
    if not set(map(type, values)) <= {str, type(None)}:
        # Mixed types (JSON): 1 == True == 1.0 would share a cache entry, so go row by row.
        results = [normalise(value) for value in values]
        for row, (_, message) in zip(rows, results, strict=True):
            if message is not None:
                errors.append(RowError(row, name, message))
        return [value for value, _ in results]
    distinct = set(values)
    verdicts = {value: normalise(value) for value in distinct}
    bad = {value for value, (_, message) in verdicts.items() if message is not None}
    if bad:
        for row, value in zip(rows, values, strict=True):
            if value in bad:
                errors.append(RowError(row, name, str(verdicts[value][1])))
    if all(verdicts[value][0] is value for value in distinct):
        return values  # already normal: the common case, no copy
    return [verdicts[value][0] for value in values]


def _plain_utc_column(values: list[object]) -> list[int | None] | None:
    """Microseconds for a column whose values are all ``YYYY-MM-DDTHH:MM:SSZ``, parsed by
    numpy in one call (1M values: about 0.3 s against 1.8 s one by one); None when any value
    has another shape or an impossible date (numpy refuses it), so the caller goes value by
    value and reports the bad ones. The shape check excludes what datetime.fromisoformat
    refuses and numpy might not (hour 24, second 60)."""
    if not values or not all(type(value) is str for value in values):
        return None
    joined = "\n".join(values)  # type: ignore[arg-type]
    if len(joined) != 21 * len(values) - 1 or len(_PLAIN_UTC.findall(joined)) != len(values):
        return None
    try:
        seconds = np.array([value[:19] for value in values], dtype="datetime64[s]")  # type: ignore[index]
    except ValueError:
        return None
    micros = seconds.astype(np.int64) * 1_000_000
    if micros.size and (int(micros.min()) < EARLIEST_MICROS or int(micros.max()) >= LATEST_MICROS):
        return None  # the value-by-value path names each row out of range
    return micros.tolist()


class ColumnarBatch(Protocol):
    """A batch that validates itself column-wise (``auditor.ingestion.arrow_csv``)."""

    errors: list[RowError]

    def __len__(self) -> int: ...

    def validated(self, categories: list[str] | None) -> ValidBatch: ...


AnyBatch = RawBatch | ColumnarBatch


def validate_batch(batch: AnyBatch, categories: Sequence[str] | None) -> ValidBatch:
    """Check every row of ``batch``; raise ``IngestRejected`` naming every bad row and field.

    ``categories`` are the project's category names; None accepts any label that is a valid
    id (a file read without a project, whose vocabulary is the labels seen). Returns the
    normalised batch.
    """
    if not isinstance(batch, RawBatch):
        return batch.validated(None if categories is None else list(categories))
    errors = list(batch.errors)
    rows = batch.rows
    item = _normalise_column(batch.item, rows, "item", _required_id, errors)
    rater = _normalise_column(batch.rater, rows, "rater", _required_id, errors)
    check_label = _required_id if categories is None else _label_checker(categories)
    label = _normalise_column(batch.label, rows, "label", check_label, errors)

    def optional(name: str, normalise: Callable[[object], Normalised]) -> list | None:
        column = getattr(batch, name)
        if column is None:
            return None
        return _normalise_column(column, rows, name, normalise, errors)

    valid = ValidBatch(
        rows=rows,
        item=item,  # type: ignore[arg-type]
        rater=rater,  # type: ignore[arg-type]
        label=label,  # type: ignore[arg-type]
        session=optional("session", _optional_id),
        labeled_at=(_plain_utc_column(batch.labeled_at) if batch.labeled_at is not None else None)
        or optional("labeled_at", _timestamp),
        rater_kind=optional("rater_kind", _rater_kind),
        key=optional("key", _optional_id),
    )
    if not errors:
        check_rater_kinds(valid, errors)
        check_client_keys(valid, errors)
        check_natural_identity(valid, errors)
    if errors:
        raise IngestRejected(errors)
    return valid


def check_rater_kinds(
    batch: ValidBatch,
    errors: list[RowError],
    first: dict[str, tuple[RaterKind, int]] | None = None,
) -> None:
    """One rater, one kind: a row that contradicts an earlier row is an error.

    ``first`` (rater -> kind and the row that first stated it) carries what earlier batches
    of the same file stated, and is updated; None checks this batch alone.
    """
    if batch.rater_kind is None:
        return
    if first is None:
        stated = {
            (r, k) for r, k in zip(batch.rater, batch.rater_kind, strict=True) if k is not None
        }
        if len(stated) == len({r for r, _ in stated}):
            return
        first = {}
    for row, rater, kind in zip(batch.rows, batch.rater, batch.rater_kind, strict=True):
        if kind is None:
            continue
        seen = first.setdefault(rater, (kind, row))
        if seen[0] != kind:
            message = f"rater {shown(rater)} is '{kind}' here but '{seen[0]}' in row {seen[1]}"
            errors.append(RowError(row, "rater_kind", message))


def label_content(batch: ValidBatch, position: int) -> tuple[object, ...]:
    """What a client key stands for: item, rater, label, session (labeled_at aside)."""
    session = batch.session[position] if batch.session is not None else None
    return (batch.item[position], batch.rater[position], batch.label[position], session)


KeyUse = tuple[tuple[object, ...], int | None, int]  # label content, labeled_at, row


def check_client_keys(
    batch: ValidBatch, errors: list[RowError], seen: dict[str, KeyUse] | None = None
) -> None:
    """A key seen twice: same content is a duplicate (skipped), other content a conflict.

    labeled_at counts only when both rows give one: a client resending without a time must
    not turn a retry into a conflict. ``seen`` carries the keys of earlier batches of the
    same file, and is updated; None checks this batch alone.
    """
    if batch.key is None:
        return
    if seen is None:
        keys = [k for k in batch.key if k is not None]
        if len(set(keys)) == len(keys):
            return
        seen = {}
    for position, key in enumerate(batch.key):
        if key is None:
            continue
        row = batch.rows[position]
        content = label_content(batch, position)
        at = batch.labeled_at[position] if batch.labeled_at is not None else None
        first_content, first_at, first_row = seen.setdefault(key, (content, at, row))
        if first_row == row:
            continue
        if first_content == content and (first_at is None or at is None or first_at == at):
            batch.duplicate_rows.add(position)
        else:
            message = f"client key {shown(key)} is used in row {first_row} for a different label"
            errors.append(RowError(row, "key", message))


IdentityUse = tuple[str, int]  # label, row


def check_natural_identity(
    batch: ValidBatch, errors: list[RowError], seen: dict[tuple, IdentityUse] | None = None
) -> None:
    """Rows that give labeled_at and no client key (a key is the row's identity) are
    identified by (item, rater, session, labeled_at): the same identity again with the same
    label is a duplicate (skipped), with another label a conflict. ``seen`` carries earlier
    batches of the same file (None: this batch alone)."""
    if batch.labeled_at is None:
        return
    seen = {} if seen is None else seen
    sessions = batch.session or [None] * len(batch)
    keys = batch.key or [None] * len(batch)
    for position, at in enumerate(batch.labeled_at):
        if at is None or keys[position] is not None or position in batch.duplicate_rows:
            continue
        row = batch.rows[position]
        identity = (batch.item[position], batch.rater[position], sessions[position], at)
        label, first_row = seen.setdefault(identity, (batch.label[position], row))
        if first_row == row:
            continue
        if label == batch.label[position]:
            batch.duplicate_rows.add(position)
        else:
            message = (
                f"{shown(batch.label[position])} conflicts with {shown(label)} in row "
                f"{first_row}: same item, rater, session and labeled_at"
            )
            errors.append(RowError(row, "label", message))
