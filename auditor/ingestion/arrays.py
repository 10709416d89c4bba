"""A label file read straight into ``LabelArrays``, with no database (``auditor stats FILE``).

The same readers and the same row checks as ``auditor import``, so a file is accepted or
refused for the same reasons, with the same row numbers. What differs is only where rows go:
here into dense integer columns. Rows the import would store once count once: a client key
repeating an earlier row's label, and a row repeating an earlier row's natural identity (item,
rater, session, a given labeled_at) with the same label. Such a row is one look sent twice,
not a repeated presentation; how many were dropped is returned beside the arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from auditor.domain import LabelArrays, RaterKind
from auditor.ingestion.batch import (
    KeyUse,
    ValidBatch,
    check_client_keys,
    check_rater_kinds,
    validate_batch,
)
from auditor.ingestion.errors import MAX_REPORTED_ERRORS, IngestRejected, RowError, shown
from auditor.ingestion.identity import surely_distinct
from auditor.ingestion.readers import LabelFileReader, ReadOptions

BATCH_SIZE = 500_000  # rows a batch; pyarrow reads CSV blocks of about this size


def read_label_arrays(
    path: Path,
    categories: Sequence[str] | None = None,
    *,
    file_format: str | None = None,
    batch_size: int = BATCH_SIZE,
    options: ReadOptions | None = None,
) -> LabelArrays:
    """``arrays_from_reader`` on a new reader of ``path``."""
    reader = LabelFileReader(path, batch_size, file_format, options)
    return arrays_from_reader(reader, categories)


def arrays_from_reader(
    reader: LabelFileReader, categories: Sequence[str] | None = None
) -> LabelArrays:
    """``read_with_dropped`` without the count of dropped rows."""
    return read_with_dropped(reader, categories)[0]


def read_with_dropped(
    reader: LabelFileReader, categories: Sequence[str] | None = None
) -> tuple[LabelArrays, int]:
    """Read a long-format label file (CSV or JSONL) into ``LabelArrays``, and the number of
    rows dropped as duplicates of an earlier row (see the module docstring).

    ``categories`` orders the vocabulary; None takes the sorted labels seen. ``order`` is
    labeled_at in microseconds, or the row number for a row without one. Raises
    ``FileFormatError`` for a file that cannot be read at all and ``IngestRejected`` naming
    every bad row (up to a cap) and field otherwise.
    """
    items: dict[str, int] = {}
    raters: dict[str, int] = {}
    labels: dict[str, int] = {}
    kinds: dict[str, tuple[RaterKind, int]] = {}  # rater -> (kind, first row that stated it)
    keys: dict[str, KeyUse] = {}  # client key -> what its first row said
    sessions: dict[str | None, int] = {None: -1}
    parts: list[tuple[np.ndarray, ...]] = []
    errors: list[RowError] = []
    total = dropped = 0
    for raw in reader:
        try:
            batch = validate_batch(raw, None)
        except IngestRejected as rejection:
            errors.extend(rejection.errors[: max(MAX_REPORTED_ERRORS - len(errors), 0)])
            total += rejection.total
            continue
        stray: list[RowError] = []
        check_rater_kinds(batch, stray, kinds)
        check_client_keys(batch, stray, keys)
        errors.extend(stray[: max(MAX_REPORTED_ERRORS - len(errors), 0)])
        total += len(stray)
        if total:
            continue  # a bad file: keep reading only to report its other bad rows
        dropped += len(batch.duplicate_rows)
        parts.append(_columns(batch, items, raters, labels, sessions))
    if total:
        raise IngestRejected(errors, total=total)
    empty = np.empty(0, dtype=np.int64)
    row, item, rater, label, order, timed, session = (
        [np.concatenate(column) for column in zip(*parts, strict=True)] if parts else [empty] * 7
    )
    if len(row):
        unique = _identity_duplicates(row, item, rater, session, order, timed, label)
        if not unique.all():
            dropped += int((~unique).sum())
            row, item, rater, label, order = (a[unique] for a in (row, item, rater, label, order))
    names = list(categories) if categories is not None else sorted(labels)
    category = _categories(names, labels, label, row)
    arrays = LabelArrays(
        item=item,
        rater=rater,
        category=category,
        order=order,
        rater_is_model=np.asarray(
            [kinds.get(name, (RaterKind.HUMAN,))[0] == RaterKind.MODEL for name in raters],
            dtype=bool,
        ),
        category_names=tuple(names),
        rater_names=tuple(raters),
        item_names=tuple(items),
    )
    return arrays, dropped


def _columns(
    batch: ValidBatch,
    items: dict[str, int],
    raters: dict[str, int],
    labels: dict[str, int],
    sessions: dict[str | None, int],
) -> tuple[np.ndarray, ...]:
    """(row, item, rater, label, order, timed, session) of the batch's rows that are not
    duplicates; from the codes of a column-wise batch without a loop over rows."""
    keep = np.ones(len(batch), dtype=bool)
    keep[list(batch.duplicate_rows)] = False
    coded = batch.coded
    if coded is not None:
        rows = coded["lines"]
        micros = coded.get("micros")
        times = micros if micros is not None else np.full(len(rows), -1, dtype=np.int64)
        order = np.where(times >= 0, times, rows)
        timed = times >= 0
        if "key" in coded:
            key = coded["key"]
            timed &= key.codes == (key.values.index(None) if None in key.values else -1)
        session = (
            _coded_indices(coded["session"], sessions)
            if "session" in coded
            else np.full(len(rows), -1, dtype=np.int64)
        )
        columns = (
            rows,
            _coded_indices(coded["item"], items),
            _coded_indices(coded["rater"], raters),
            _coded_indices(coded["label"], labels),
            order,
            timed,
            session,
        )
        return tuple(column[keep] for column in columns) if batch.duplicate_rows else columns
    rows = np.asarray(batch.rows, dtype=np.int64)
    at = batch.labeled_at or [None] * len(batch)
    order = np.asarray(
        [row if t is None else t for row, t in zip(batch.rows, at, strict=True)], dtype=np.int64
    )
    row_keys = batch.key or [None] * len(batch)
    timed = np.asarray(
        [t is not None and k is None for t, k in zip(at, row_keys, strict=True)], dtype=bool
    )
    session = (
        _indices(batch.session, sessions)  # type: ignore[arg-type]
        if batch.session is not None
        else np.full(len(batch), -1, dtype=np.int64)
    )
    columns = (
        rows,
        _indices(batch.item, items),
        _indices(batch.rater, raters),
        _indices(batch.label, labels),
        order,
        timed,
        session,
    )
    return tuple(column[keep] for column in columns)


def _coded_indices(column: Any, index: dict[Any, int]) -> np.ndarray:
    """Dense indices of a coded column: each distinct value looked up once."""
    lookup = np.asarray([index.setdefault(v, len(index)) for v in column.values], np.int64)
    return lookup[column.codes] if len(column.codes) else np.empty(0, dtype=np.int64)


def _indices(values: list[str], index: dict[str, int]) -> np.ndarray:
    """Dense indices of ``values``, new ids numbered in order of first sight."""
    return np.asarray([index.setdefault(value, len(index)) for value in values], dtype=np.int64)


def _categories(
    names: list[str], seen: dict[str, int], label: np.ndarray, row: np.ndarray
) -> np.ndarray:
    """Map label indices (order of first sight) to positions in ``names``; a label outside
    ``names`` is an error naming its rows."""
    position = {name: i for i, name in enumerate(names)}
    lookup = np.asarray([position.get(name, -1) for name in seen], dtype=np.int64)
    category = lookup[label] if len(label) else np.empty(0, dtype=np.int64)
    unknown = np.flatnonzero(category < 0)
    if len(unknown):
        labels_by_index = list(seen)
        errors = [
            RowError(
                int(row[p]),
                "label",
                f"{shown(labels_by_index[label[p]])} is not one of {', '.join(names)}",
            )
            for p in unknown[:MAX_REPORTED_ERRORS]
        ]
        raise IngestRejected(errors, total=len(unknown))
    return category


def _identity_keys(
    item: np.ndarray, rater: np.ndarray, session: np.ndarray, at: np.ndarray, wanted: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Sort keys (last is primary) grouping equal (item, rater, session, labeled_at): item,
    rater and session packed into one int64 when they fit, as one key sorts 2x faster."""
    item, rater, session, at = item[wanted], rater[wanted], session[wanted] + 1, at[wanted]
    if not len(item):
        return (at,)
    raters, sessions = int(rater.max()) + 1, int(session.max()) + 1
    if (int(item.max()) + 1) * raters * sessions < 1 << 62:
        return at, (item * raters + rater) * sessions + session
    return at, session, rater, item


def _identity_duplicates(
    row: np.ndarray,
    item: np.ndarray,
    rater: np.ndarray,
    session: np.ndarray,
    at: np.ndarray,
    timed: np.ndarray,
    label: np.ndarray,
) -> np.ndarray:
    """Positions to keep: a row that gives labeled_at (and no key) and repeats an earlier
    row's natural identity (item, rater, session, labeled_at) with the same label is a
    duplicate, as the import would store it once; with another label it is an error naming
    both rows.
    Column-wise: a row hash proves the usual case (no repeat); else sort by identity and
    compare neighbours."""
    keep = np.ones(len(row), dtype=bool)
    identity = [item, rater, session, at]
    if not timed.all():
        identity = [column[timed] for column in identity]
    if surely_distinct(identity):
        return keep
    candidates = np.flatnonzero(timed)
    # Rows are in file order and lexsort is stable: within a run of equal identities the
    # first row comes first without sorting on the row too.
    ordering = candidates[np.lexsort(_identity_keys(item, rater, session, at, candidates))]
    same = (
        (item[ordering][1:] == item[ordering][:-1])
        & (rater[ordering][1:] == rater[ordering][:-1])
        & (session[ordering][1:] == session[ordering][:-1])
        & (at[ordering][1:] == at[ordering][:-1])
    )
    if not same.any():
        return keep
    # Each repeat is compared with the first row of its run of equal identities.
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    first = ordering[starts[np.cumsum(np.concatenate(([True], ~same))) - 1]]
    repeat = np.concatenate(([False], same))
    later, earliest = ordering[repeat], first[repeat]
    conflict = label[later] != label[earliest]
    if conflict.any():
        errors = [
            RowError(
                int(row[p]),
                "label",
                f"conflicts with row {int(row[q])}: same item, rater, session and labeled_at",
            )
            for p, q in zip(later[conflict], earliest[conflict], strict=True)
        ]
        raise IngestRejected(errors[:MAX_REPORTED_ERRORS], total=len(errors))
    keep[later] = False
    return keep
