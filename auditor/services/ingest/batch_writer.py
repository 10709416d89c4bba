"""Write one validated batch of labels inside the caller's transaction: resolve items,
raters and sessions in bulk, drop the rows already stored (by client key or by natural
identity), insert the rest, fulfil planned repeats.

API batches and the integrations (Label Studio) go through ``write_batch``. It is one of three
implementations of the duplicate and repeat rules: file imports, on both databases, judge
them in the staging table's SQL (``auditor.storage.staging``), and ``auditor stats`` in memory
(``auditor.ingestion.arrays``). tests/integration/test_repeat_rules.py runs one table of
scenarios through all three on both databases, so a change to one that the others lack fails."""

from __future__ import annotations

from datetime import datetime

from auditor.domain import RaterKind, to_micros
from auditor.ingestion.batch import RawBatch, ValidBatch, validate_batch
from auditor.ingestion.errors import IngestRejected, RowError, shown
from auditor.storage.db import utc_now
from auditor.storage.project_repository import ProjectRecord
from auditor.storage.unit_of_work import UnitOfWork


def category_ids_of(uow: UnitOfWork, project: ProjectRecord) -> dict[str, int]:
    return {c.name: c.id for c in uow.projects.categories(project.id)}


def write_batch(
    uow: UnitOfWork,
    project: ProjectRecord,
    categories: dict[str, int],
    raw: RawBatch | ValidBatch,
    received_at: datetime | None,
    import_id: int | None = None,
) -> tuple[int, int]:
    """Validate (unless given a ``ValidBatch``), resolve and insert one batch inside the
    caller's transaction.

    Returns (inserted, duplicates); raises ``IngestRejected`` before inserting any label.
    """
    batch = raw if isinstance(raw, ValidBatch) else validate_batch(raw, list(categories))
    received = to_micros(received_at or utc_now())
    labeled_at = (
        [received if t is None else t for t in batch.labeled_at]
        if batch.labeled_at is not None
        else [received] * len(batch)
    )
    errors: list[RowError] = []
    raters = _resolve_raters(uow, project.id, batch, errors)
    items = uow.labels.resolve_items(project.id, batch.item)
    rater_ids = [raters[name][0] for name in batch.rater]
    item_ids = [items[name] for name in batch.item]
    category_ids = [categories[name] for name in batch.label]
    session_ids = _resolve_sessions(uow, project.id, batch, rater_ids, labeled_at)
    skip = set(batch.duplicate_rows)
    if batch.key is not None:
        content = (item_ids, rater_ids, category_ids, session_ids)
        skip |= _stored_duplicates(uow, project.id, batch, content, errors)
    if batch.labeled_at is not None:
        content = (item_ids, rater_ids, category_ids, session_ids)
        skip |= _stored_identities(uow, project.id, batch, content, skip, errors)
    if errors:
        raise IngestRejected(errors)
    keys = batch.key or [None] * len(batch)
    sessions = session_ids or [None] * len(batch)
    rows = [
        (project.id, item, rater, session, category, at, received, key, import_id)
        for item, rater, session, category, at, key in zip(
            item_ids, rater_ids, sessions, category_ids, labeled_at, keys, strict=True
        )
    ]
    if skip:
        rows = [row for position, row in enumerate(rows) if position not in skip]
    if rows:
        before = uow.labels.max_label_id(project.id)
        uow.labels.insert_labels(rows)
        # A new label of a rater on an item planned for her to see again fulfils that repeat,
        # whatever the route (API, import, integration): one set-based statement per batch.
        uow.repeats.fulfil(project.id, before, received)
    return len(rows), len(skip)


def _resolve_raters(
    uow: UnitOfWork, project_id: int, batch: ValidBatch, errors: list[RowError]
) -> dict[str, tuple[int, RaterKind]]:
    """Raters by name, created on first sight; a row stating another kind than the stored
    one is an error (a rater's kind never changes)."""
    kinds: dict[str, RaterKind | None] = dict.fromkeys(batch.rater)
    if batch.rater_kind is not None:
        for rater, kind in set(zip(batch.rater, batch.rater_kind, strict=True)):
            if kind is not None:
                kinds[rater] = kind
    raters = uow.labels.resolve_raters(project_id, kinds)
    changed = {name for name, kind in kinds.items() if kind is not None and raters[name][1] != kind}
    if changed and batch.rater_kind is not None:
        for row, rater, kind in zip(batch.rows, batch.rater, batch.rater_kind, strict=True):
            if rater in changed and kind is not None and kind != raters[rater][1]:
                message = (
                    f"rater {shown(rater)} is stored as '{raters[rater][1]}'; "
                    f"its kind cannot change to '{kind}'"
                )
                errors.append(RowError(row, "rater_kind", message))
    return raters


def _resolve_sessions(
    uow: UnitOfWork,
    project_id: int,
    batch: ValidBatch,
    rater_ids: list[int],
    labeled_at: list[int],
) -> list[int | None] | None:
    if batch.session is None:
        return None
    spans: dict[tuple[int, str], tuple[int, int]] = {}
    for rater_id, name, at in zip(rater_ids, batch.session, labeled_at, strict=True):
        if name is None:
            continue
        earliest, latest = spans.get((rater_id, name), (at, at))
        spans[(rater_id, name)] = (min(earliest, at), max(latest, at))
    if not spans:
        return None
    ids = uow.labels.resolve_sessions(project_id, spans)
    return [
        None if name is None else ids[(rater_id, name)]
        for rater_id, name in zip(rater_ids, batch.session, strict=True)
    ]


def _stored_duplicates(
    uow: UnitOfWork,
    project_id: int,
    batch: ValidBatch,
    content: tuple[list[int], list[int], list[int], list[int | None] | None],
    errors: list[RowError],
) -> set[int]:
    """Positions whose client key is stored with the same content (duplicates); a stored key
    with other content is a conflict error. labeled_at counts only when the row gives it."""
    keys = batch.key or []
    stored = uow.labels.find_client_keys(project_id, (k for k in keys if k is not None))
    if not stored:
        return set()
    item_ids, rater_ids, category_ids, session_ids = content
    duplicates = set()
    for position, key in enumerate(keys):
        if key is None or key not in stored:
            continue
        item, rater, category, session, at = stored[key]
        given_at = batch.labeled_at[position] if batch.labeled_at is not None else None
        same = (
            (item, rater, category)
            == (item_ids[position], rater_ids[position], category_ids[position])
            and session == (session_ids[position] if session_ids is not None else None)
            and (given_at is None or given_at == at)
        )
        if same:
            duplicates.add(position)
        else:
            message = f"client key {shown(key)} is already stored for a different label"
            errors.append(RowError(batch.rows[position], "key", message))
    return duplicates


def _stored_identities(
    uow: UnitOfWork,
    project_id: int,
    batch: ValidBatch,
    content: tuple[list[int], list[int], list[int], list[int | None] | None],
    skip: set[int],
    errors: list[RowError],
) -> set[int]:
    """Rows giving labeled_at and no client key whose natural identity (item, rater, session,
    labeled_at) is stored: the same label is a duplicate, another label a conflict naming
    the row. Earlier batches of the same file are stored by now (same transaction), so this
    covers them."""
    item_ids, rater_ids, category_ids, session_ids = content
    sessions = session_ids or [None] * len(batch)
    times = batch.labeled_at or []
    keys = batch.key or [None] * len(batch)
    wanted = [
        (p, item_ids[p], rater_ids[p], sessions[p], at)
        for p, at in enumerate(times)
        if at is not None and keys[p] is None and p not in skip
    ]
    stored = uow.imports.stored_identities(project_id, wanted)
    duplicates = set()
    for position, (category, _import_id) in stored.items():
        if category == category_ids[position]:
            duplicates.add(position)
        else:
            # No import id here: this path answers API keys too, and the stored id is the
            # instance-wide sequence (`auditor imports list` finds the import by its rows).
            message = (
                f"{shown(batch.label[position])} conflicts with a stored label of the "
                "same item, rater, session and labeled_at"
            )
            errors.append(RowError(batch.rows[position], "label", message))
    return duplicates
