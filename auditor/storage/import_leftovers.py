"""What a revert leaves besides its labels: the sessions, items and raters they were of.

Sessions, items and raters come into being only through labels (file or API rows), so after a
revert they should look, as far as it is cheap, as if the reverted labels never came:

- a session spans the labels it keeps again (started_at/ended_at);
- an item left without labels goes, unless a planned repeat names it;
- when the project has no label left at all (every import reverted), all its sessions, items
  and raters go (but those a planned repeat names: `auditor repeats status` shows them).
  The dashboard said "0 labels of 3 items by 2 raters in 2 sessions"; a firing alert on a
  rater who is gone resolves as retired.

In a project that keeps labels, a session or rater left without labels stays (a session
keeps its last span): deleting one runs the reference guard trigger of migration 0001, and
labels have no index on session_id nor one led by rater_id, so each such row costs a pass
over the project's labels (2000 sessions under 1M labels: a 0.7 s revert took 60 s). Items
are probed through the identity index (project_id, item_id, ...), so they always go.
Narrowing the sessions is one pass over the project's labels. Commits nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, delete, exists, func, select, update
from sqlalchemy.orm import Session as OrmSession

from auditor.storage.db import affected
from auditor.storage.models import Item, Label, PlannedRepeat, Rater, RepeatRequest, Session

_CHUNK = 500  # ids per IN list


@dataclass(frozen=True)
class Touched:
    """The sessions and items of the labels about to be deleted."""

    sessions: list[int]
    items: list[int]


@dataclass(frozen=True)
class Tidied:
    sessions_narrowed: int = 0
    sessions_deleted: int = 0
    items_deleted: int = 0
    raters_deleted: int = 0


def _distinct(db: OrmSession, column: Any, where: Sequence[ColumnElement[bool]]) -> list[int]:
    statement = select(column).where(*where, column.is_not(None)).distinct()
    return sorted(i for i in db.scalars(statement) if i is not None)


def touched(db: OrmSession, where: Sequence[ColumnElement[bool]]) -> Touched:
    """Read before the delete: what the labels matching ``where`` refer to."""
    return Touched(
        _distinct(db, Label.session_id, where),
        _distinct(db, Label.item_id, where),
    )


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[start : start + _CHUNK]) for start in range(0, len(ids), _CHUNK)]


def tidy(db: OrmSession, project_id: int, before: Touched) -> Tidied:
    """Read after the delete: fit or remove what ``before`` named; when the project has no
    label left, every session, item and rater of it (but those planned repeats name)."""
    if db.scalar(select(exists().where(Label.project_id == project_id))):
        narrowed = _fit_sessions(db, project_id, before.sessions)
        return Tidied(narrowed, 0, _delete_items(db, project_id, before.items), 0)
    # No label left: the guard triggers' probes find nothing at once (project_id index).
    sessions = affected(db.execute(delete(Session).where(Session.project_id == project_id)))
    return Tidied(0, sessions, _delete_items(db, project_id, None), _delete_raters(db, project_id))


def _fit_sessions(db: OrmSession, project_id: int, session_ids: Sequence[int]) -> int:
    """Narrow each session to the labels it keeps (one left empty keeps its span); how many
    changed."""
    narrowed = 0
    for chunk in _chunks(session_ids):
        spans = db.execute(
            select(Label.session_id, func.min(Label.labeled_at), func.max(Label.labeled_at))
            .where(Label.project_id == project_id, Label.session_id.in_(chunk))
            .group_by(Label.session_id)
        ).all()
        for session_id, started, ended in spans:
            statement = (
                update(Session)
                .where(
                    Session.id == session_id,
                    (Session.started_at != started) | (Session.ended_at != ended),
                )
                .values(started_at=started, ended_at=ended)
            )
            narrowed += affected(db.execute(statement))
    return narrowed


def _delete_items(db: OrmSession, project_id: int, item_ids: Sequence[int] | None) -> int:
    """Items of ``item_ids`` (None: of the project) with no label and no planned repeat."""
    labeled = exists().where(Label.project_id == project_id, Label.item_id == Item.id)
    planned = exists().where(
        PlannedRepeat.project_id == project_id, PlannedRepeat.item_id == Item.id
    )
    unused = delete(Item).where(Item.project_id == project_id, ~labeled, ~planned)
    unused = unused.execution_options(synchronize_session=False)
    if item_ids is None:
        return affected(db.execute(unused))
    return sum(affected(db.execute(unused.where(Item.id.in_(c)))) for c in _chunks(item_ids))


def _delete_raters(db: OrmSession, project_id: int) -> int:
    """The project's raters without a session, a planned repeat or a plan request; called
    when it has no label left."""
    sessions = exists().where(Session.project_id == project_id, Session.rater_id == Rater.id)
    planned = exists().where(
        PlannedRepeat.project_id == project_id, PlannedRepeat.rater_id == Rater.id
    )
    requests = exists().where(
        RepeatRequest.project_id == project_id, RepeatRequest.rater_id == Rater.id
    )
    statement = delete(Rater).where(Rater.project_id == project_id, ~sessions, ~planned, ~requests)
    return affected(db.execute(statement.execution_options(synchronize_session=False)))
