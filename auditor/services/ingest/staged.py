"""The PostgreSQL side of a file import: validated batches go to a staging table, and one
set-based pass (``auditor.storage.staging``) resolves and inserts them at the end."""

from __future__ import annotations

from typing import Any

from auditor.ingestion.batch import ValidBatch
from auditor.ingestion.errors import RowError, shown
from auditor.storage.staging import PostgresStaging, StagedResult


def staging_rows(batch: ValidBatch, categories: dict[str, int]) -> list[tuple[Any, ...]]:
    """(row, item, rater, session, category id, labeled_at, kind, key) of each row that is
    not a duplicate inside its batch."""
    n = len(batch)
    none: list[Any] = [None] * n
    kinds = [None if k is None else k.value for k in batch.rater_kind] if batch.rater_kind else none
    columns = zip(
        batch.rows,
        batch.item,
        batch.rater,
        batch.session or none,
        [categories[name] for name in batch.label],
        batch.labeled_at or none,
        kinds,
        batch.key or none,
        strict=True,
    )
    if not batch.duplicate_rows:
        return list(columns)
    return [row for position, row in enumerate(columns) if position not in batch.duplicate_rows]


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


__all__ = ["PostgresStaging", "staged_errors", "staging_rows"]
