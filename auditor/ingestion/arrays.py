"""A label file read straight into ``LabelArrays``, with no database (``auditor stats FILE``).

The same readers and the same row checks as ``auditor import``, so a file is accepted or
refused for the same reasons, with the same row numbers. What differs is only where rows go:
here into dense integer columns. Rows with a client key repeating an earlier row's label are
counted once, as the import would store them once. Rows equal in item, rater, label, session
and a given labeled_at are one look sent twice, not a repeated presentation: they count once
too (``read_label_file`` says how many were dropped). A row without labeled_at is always a look
of its own: nothing tells a resend from a second look.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from auditor.domain import LabelArrays, RaterKind
from auditor.ingestion.batch import KeyUse, check_client_keys, check_rater_kinds, validate_batch
from auditor.ingestion.errors import MAX_REPORTED_ERRORS, IngestRejected, RowError, shown
from auditor.ingestion.readers import LabelFileReader

BATCH_SIZE = 50_000


def read_label_arrays(
    path: Path,
    categories: Sequence[str] | None = None,
    *,
    file_format: str | None = None,
    batch_size: int = BATCH_SIZE,
) -> LabelArrays:
    """``read_label_file`` without the count of dropped duplicate rows."""
    return read_label_file(path, categories, file_format=file_format, batch_size=batch_size)[0]


def _first_of_duplicates(
    item: np.ndarray, rater: np.ndarray, label: np.ndarray, session: np.ndarray, at: np.ndarray
) -> np.ndarray:
    """Mask (n,) of rows to keep: the first of the rows equal in item, rater, label, session
    and ``at`` (the caller gives rows without labeled_at an ``at`` of their own).

    Only rows of an (item, rater) cell seen more than once can be duplicates: one sort of the
    cell keys finds them, and only those few rows are sorted on all five columns.
    """
    keep = np.ones(item.shape[0], dtype=bool)
    cell = item * (int(rater.max()) + 1) + rater
    _, inverse, counts = np.unique(cell, return_inverse=True, return_counts=True)
    candidates = np.flatnonzero(counts[inverse.reshape(-1)] > 1)
    if candidates.shape[0] < 2:
        return keep
    columns = (at[candidates], session[candidates], label[candidates], cell[candidates])
    order = candidates[np.lexsort(columns)]  # stable: the first row of a run comes first
    same = np.ones(order.shape[0] - 1, dtype=bool)
    for column in (cell, label, session, at):  # bounded by the five key columns
        same &= column[order[1:]] == column[order[:-1]]
    keep[order[1:][same]] = False
    return keep


def read_label_file(
    path: Path,
    categories: Sequence[str] | None = None,
    *,
    file_format: str | None = None,
    batch_size: int = BATCH_SIZE,
) -> tuple[LabelArrays, int]:
    """Read a long-format label file (CSV or JSONL) into ``LabelArrays``.

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
    sessions: dict[str | None, int] = {}
    parts: list[tuple[np.ndarray, ...]] = []
    errors: list[RowError] = []
    total = 0
    for raw in LabelFileReader(path, batch_size, file_format):
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
        keep = [p for p in range(len(batch)) if p not in batch.duplicate_rows]
        rows = np.asarray(batch.rows, dtype=np.int64)[keep]
        times = batch.labeled_at or [None] * len(batch)
        order = np.asarray(
            [row if at is None else at for row, at in zip(batch.rows, times, strict=True)],
            dtype=np.int64,
        )[keep]
        timed = np.asarray([at is not None for at in times], dtype=np.int64)[keep]
        session = _indices(batch.session or [None] * len(batch), sessions)[keep]
        parts.append(
            (
                rows,
                _indices(batch.item, items)[keep],
                _indices(batch.rater, raters)[keep],
                _indices(batch.label, labels)[keep],
                order,
                session,
                timed,
            )
        )
    if total:
        raise IngestRejected(errors, total=total)
    empty = np.empty(0, dtype=np.int64)
    row, item, rater, label, order, session, timed = (
        [np.concatenate(column) for column in zip(*parts, strict=True)] if parts else [empty] * 7
    )
    # a row without labeled_at gets its row number as ``at``: unique, so it is always kept
    at = np.where(timed > 0, order, -1 - row)
    keep = _first_of_duplicates(item, rater, label, session, at) if len(row) else empty > 0
    dropped = int((~keep).sum())
    if dropped:
        row, item, rater, label, order = (a[keep] for a in (row, item, rater, label, order))
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
