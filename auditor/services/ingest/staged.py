"""The service side of a staged file import: validated batches become staging columns, and
the staged pass's refusals become row errors (``auditor.storage.staging`` does the SQL)."""

from __future__ import annotations

from typing import Any

import numpy as np

from auditor.ingestion.batch import ValidBatch
from auditor.ingestion.errors import RowError, shown
from auditor.storage.staging import StagedResult, Staging
from auditor.storage.staging_copy import StagedColumns


def staged_columns(batch: ValidBatch, categories: dict[str, int]) -> StagedColumns:
    """The rows of ``batch`` that are not duplicates inside it, as staging columns."""
    coded = batch.coded
    if coded is not None:  # column-wise: category ids through the codes
        label = coded["label"]
        lookup = np.asarray([categories[name] for name in label.values], dtype=np.int64)
        category_ids: list[Any] = lookup[label.codes].tolist()
    else:
        category_ids = [categories[name] for name in batch.label]
    kinds = (
        [None if k is None else k.value for k in batch.rater_kind]
        if batch.rater_kind is not None
        else None
    )
    columns: dict[str, Any] = {
        "line": batch.rows,
        "item": batch.item,
        "rater": batch.rater,
        "session": batch.session,
        "category_id": category_ids,
        "labeled_at": batch.labeled_at,
        "rater_kind": kinds,
        "client_key": batch.key,
    }
    skip = batch.duplicate_rows
    if skip:
        columns = {
            name: None
            if values is None
            else [v for position, v in enumerate(values) if position not in skip]
            for name, values in columns.items()
        }
    return StagedColumns(**columns, identified=_identified(batch))


def _identified(batch: ValidBatch) -> bool:
    """Does a row give labeled_at and no client key?"""
    if batch.labeled_at is None:
        return False
    if batch.key is None:
        return any(at is not None for at in batch.labeled_at)
    return any(
        at is not None and key is None for at, key in zip(batch.labeled_at, batch.key, strict=True)
    )


def staged_errors(result: StagedResult) -> tuple[list[RowError], int]:
    """The staged pass's refusals as row errors (and their total)."""
    errors = [
        RowError(
            row,
            "rater_kind",
            f"rater {shown(rater)} is stored as '{stored}'; its kind cannot change to '{given}'",
        )
        for row, rater, given, stored in result.kind_errors
    ]
    for repeat in result.conflicts:
        if repeat.by_key:
            where = (
                f"used in row {repeat.first_row}"
                if repeat.first_row is not None
                else "already stored"
            )
            errors.append(
                RowError(repeat.row, "key", f"client key is {where} for a different label")
            )
        elif repeat.first_row is not None:
            message = (
                f"conflicts with row {repeat.first_row}: same item, rater, session and labeled_at"
            )
            errors.append(RowError(repeat.row, "label", message))
        else:
            message = (
                "conflicts with a stored label of the same item, rater, session and labeled_at"
            )
            errors.append(RowError(repeat.row, "label", message))
    return errors, result.kind_error_count + result.conflict_count


__all__ = ["Staging", "staged_columns", "staged_errors"]
