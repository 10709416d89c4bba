"""Planned repeats: the planner's reads and writes, fulfilment and expiry (set-based SQL).

Times are microseconds since the epoch here (the stored form), as in ``label_loader``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import BigInteger, bindparam, func, insert, select, text, type_coerce, update
from sqlalchemy.orm import Session

from auditor.domain import RepeatSettings
from auditor.stats.catalogue import names_for
from auditor.storage.db import affected
from auditor.storage.models import Item, Label, PlannedRepeat, Project, Rater, RepeatRequest
from auditor.storage.snapshot_models import MetricPoint

_repeats = PlannedRepeat.__table__
# The per-rater metrics the recompute adds (not computed by auditor.stats): repeat coverage.
COVERAGE_METRICS = names_for("rater", from_stats=False)
_labels = Label.__table__

# A new label of a rater on an item she has an open (unexpired) repeat of fulfils it. One
# statement per ingested batch: the batch's labels (ids above the batch's starting watermark,
# an index range) joined to the open repeats through their partial unique index.
_ANY_OPEN = text(
    "SELECT EXISTS (SELECT 1 FROM planned_repeats "
    "WHERE project_id = :project_id AND status = 'open')"
)
_FULFIL = text(
    """
    UPDATE planned_repeats SET status = 'fulfilled', fulfilled_label_id = fresh.label_id
    FROM (
        SELECT rater_id, item_id, MIN(id) AS label_id FROM labels
        WHERE project_id = :project_id AND id > :after
        GROUP BY rater_id, item_id
    ) AS fresh
    WHERE planned_repeats.project_id = :project_id
      AND planned_repeats.status = 'open'
      AND planned_repeats.expires_at > :now
      AND planned_repeats.rater_id = fresh.rater_id
      AND planned_repeats.item_id = fresh.item_id
    """
)

# Per rater: items labeled, items labeled at least twice, and SA (the mean share of agreeing
# pairs of looks over the repeated items; docs/measures.md, "Version 2"), aggregated in the
# database.
_SELF_AGREEMENT = text(
    """
    WITH cells AS (
        SELECT rater_id, item_id, category_id, COUNT(*) AS c FROM labels
        WHERE project_id = :project_id GROUP BY rater_id, item_id, category_id
    ), looked AS (
        SELECT rater_id, item_id, SUM(c) AS m, SUM(c * (c - 1)) AS agreeing FROM cells
        GROUP BY rater_id, item_id
    )
    SELECT rater_id, COUNT(*) AS n_items,
           SUM(CASE WHEN m >= 2 THEN 1 ELSE 0 END) AS n_repeated,
           AVG(CASE WHEN m >= 2 THEN agreeing * 1.0 / (m * (m - 1)) END) AS sa
    FROM looked GROUP BY rater_id
    """
)


# Fulfilled repeats whose fulfilling label is gone (an import reverted): oldest plan first.
_UNFULFILLED = text(
    """
    SELECT id, rater_id, item_id, planned_at, expires_at FROM planned_repeats
    WHERE project_id = :project_id AND status = 'fulfilled'
      AND fulfilled_label_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM labels WHERE labels.id = planned_repeats.fulfilled_label_id)
    ORDER BY planned_at, id
    """
)
# The label that would have fulfilled the repeat instead: the rater's first remaining label on
# the item received while the repeat was open, not already the fulfilment of another repeat.
_NEXT_FULFILMENT = text(
    """
    SELECT MIN(id) FROM labels
    WHERE project_id = :project_id AND item_id = :item_id AND rater_id = :rater_id
      AND received_at >= :planned_at AND received_at < :expires_at
      AND id NOT IN (
          SELECT fulfilled_label_id FROM planned_repeats
          WHERE project_id = :project_id AND fulfilled_label_id IS NOT NULL
      )
    """
)


@dataclass(frozen=True)
class Unfulfilled:
    """What became of the fulfilled repeats whose fulfilling label was deleted."""

    reopened: int = 0
    expired: int = 0
    refulfilled: int = 0  # a later label of the rater on the item fulfils it now

    @property
    def total(self) -> int:
        return self.reopened + self.expired + self.refulfilled


@dataclass(frozen=True)
class RaterFacts:
    n_items: int
    n_repeated: int
    self_agreement: float | None


@dataclass(frozen=True)
class Coverage:
    planned: int = 0
    fulfilled: int = 0
    expired: int = 0
    open: int = 0


class RepeatRepository:
    """The repeat planner's reads and writes: raters' labels and self-agreement facts,
    planned repeats and their coverage (``uow.repeats``)."""

    def __init__(self, db: Session) -> None:
        self.db = db

    def find_rater(self, project_id: int, external_id: str) -> int | None:
        statement = select(Rater.id).where(
            Rater.project_id == project_id, Rater.external_id == external_id
        )
        return self.db.execute(statement).scalar()

    def lock_rater(self, rater_id: int) -> None:
        """Serialise planning for one rater (PostgreSQL; SQLite writers are serialised already)."""
        if self.db.get_bind().dialect.name == "postgresql":
            self.db.execute(select(Rater.id).where(Rater.id == rater_id).with_for_update())

    def rater_names(self, project_id: int) -> dict[int, str]:
        statement = select(Rater.id, Rater.external_id).where(Rater.project_id == project_id)
        return {row.id: row.external_id for row in self.db.execute(statement)}

    def rater_labels(
        self, project_id: int, rater_id: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rater's labels as (item id, category id, labeled_at) in labeled_at order."""
        statement = (
            select(
                _labels.c.item_id,
                _labels.c.category_id,
                type_coerce(_labels.c.labeled_at, BigInteger),  # microseconds, as stored
            )
            .where(_labels.c.project_id == project_id, _labels.c.rater_id == rater_id)
            .order_by(_labels.c.labeled_at, _labels.c.id)
        )
        # plain tuples: numpy probing Row objects for the array protocol costs 10x the query
        rows = [tuple(row) for row in self.db.execute(statement).all()]
        columns = np.array(rows, dtype=np.int64).reshape(-1, 3)
        return columns[:, 0], columns[:, 1], columns[:, 2]

    def self_agreement_by_rater(self, project_id: int) -> dict[int, RaterFacts]:
        rows = self.db.execute(_SELF_AGREEMENT, {"project_id": project_id})
        return {
            int(row.rater_id): RaterFacts(
                int(row.n_items),
                int(row.n_repeated or 0),
                None if row.sa is None else float(row.sa),
            )
            for row in rows
        }

    def expire(self, project_id: int, now: int) -> int:
        statement = (
            update(_repeats)
            .where(
                _repeats.c.project_id == project_id,
                _repeats.c.status == "open",
                _repeats.c.expires_at <= now,
            )
            .values(status="expired")
        )
        return affected(self.db.execute(statement))

    def fulfil(self, project_id: int, after_label_id: int | None, now: int) -> int:
        """Mark fulfilled the open repeats met by labels with ids above ``after_label_id``."""
        # Most projects plan no repeats: skip the pass over the new labels (a million after a
        # file import) when nothing is open.
        if not self.db.execute(_ANY_OPEN, {"project_id": project_id}).scalar():
            return 0
        parameters = {"project_id": project_id, "after": after_label_id or 0, "now": now}
        return affected(self.db.execute(_FULFIL, parameters))

    def unfulfil_deleted(self, project_id: int, now: int) -> Unfulfilled:
        """Undo the fulfilment of every repeat whose fulfilling label no longer exists.

        Each goes back to what it would be had that label never come: fulfilled by the
        rater's next label on the item received while it was open, if one remains; else open
        until ``expires_at``; else expired. Expired, too, when the rater has another open
        repeat of the item (planned after the fulfilment): at most one is open per rater and
        item, and the newer one asks for the same look.
        """
        found = self.db.execute(_UNFULFILLED, {"project_id": project_id}).all()
        if not found:
            return Unfulfilled()
        for rater_id in sorted({row.rater_id for row in found}):
            self.lock_rater(rater_id)  # the planner's lock: no open repeat appears meanwhile
        counts = {"open": 0, "expired": 0, "fulfilled": 0}
        for row in found:
            keys = {"project_id": project_id, "rater_id": row.rater_id, "item_id": row.item_id}
            window = {"planned_at": row.planned_at, "expires_at": row.expires_at}
            label_id = self.db.execute(_NEXT_FULFILMENT, {**keys, **window}).scalar()
            if label_id is not None:
                status = "fulfilled"
            elif row.expires_at > now and not self._open_exists(**keys):
                status = "open"
            else:
                status = "expired"
            self.db.execute(
                update(_repeats)
                .where(_repeats.c.id == row.id)
                .values(status=status, fulfilled_label_id=label_id)
            )
            counts[status] += 1
        return Unfulfilled(counts["open"], counts["expired"], counts["fulfilled"])

    def _open_exists(self, project_id: int, rater_id: int, item_id: int) -> bool:
        statement = select(_repeats.c.id).where(
            _repeats.c.project_id == project_id,
            _repeats.c.rater_id == rater_id,
            _repeats.c.item_id == item_id,
            _repeats.c.status == "open",
        )
        return self.db.execute(statement.limit(1)).first() is not None

    def open_items(self, project_id: int, rater_id: int, now: int) -> np.ndarray:
        statement = select(_repeats.c.item_id).where(
            _repeats.c.project_id == project_id,
            _repeats.c.rater_id == rater_id,
            _repeats.c.status == "open",
            _repeats.c.expires_at > now,
        )
        return np.array(self.db.execute(statement).scalars().all(), dtype=np.int64)

    def item_names(self, ids: Iterable[int]) -> dict[int, str]:
        wanted = list(ids)
        if not wanted:
            return {}
        statement = select(Item.id, Item.external_id).where(
            Item.id.in_(bindparam("ids", expanding=True))
        )
        return {row.id: row.external_id for row in self.db.execute(statement, {"ids": wanted})}

    def other_lookers(
        self, project_id: int, item: str, rater_id: int
    ) -> list[tuple[int, int, int]]:
        """(rater id, item id, first labeled_at) of each human rater other than ``rater_id``
        with a label on item ``item`` and no open repeat of it."""
        open_repeat = (
            select(_repeats.c.id)
            .where(
                _repeats.c.project_id == project_id,
                _repeats.c.rater_id == _labels.c.rater_id,
                _repeats.c.item_id == _labels.c.item_id,
                _repeats.c.status == "open",
            )
            .exists()
        )
        statement = (
            select(
                _labels.c.rater_id,
                _labels.c.item_id,
                func.min(type_coerce(_labels.c.labeled_at, BigInteger)),
            )
            .join(Item, Item.id == _labels.c.item_id)
            .join(Rater, Rater.id == _labels.c.rater_id)
            .where(
                _labels.c.project_id == project_id,
                Item.external_id == item,
                _labels.c.rater_id != rater_id,
                Rater.kind == "human",
                ~open_repeat,
            )
            .group_by(_labels.c.rater_id, _labels.c.item_id)
            .order_by(_labels.c.rater_id)
        )
        return [(int(r[0]), int(r[1]), int(r[2])) for r in self.db.execute(statement)]

    def insert_planned(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.db.execute(insert(_repeats), rows)

    def coverage(self, project_id: int, now: int) -> dict[int, Coverage]:
        """Per rater id: repeats planned, fulfilled, expired (or past their time) and open."""
        expired = (_repeats.c.status == "expired") | (
            (_repeats.c.status == "open") & (_repeats.c.expires_at <= now)
        )
        still_open = (_repeats.c.status == "open") & (_repeats.c.expires_at > now)
        statement = (
            select(
                _repeats.c.rater_id,
                func.count(),
                func.sum(func.cast(_repeats.c.status == "fulfilled", _repeats.c.rater_id.type)),
                func.sum(func.cast(expired, _repeats.c.rater_id.type)),
                func.sum(func.cast(still_open, _repeats.c.rater_id.type)),
            )
            .where(_repeats.c.project_id == project_id)
            .group_by(_repeats.c.rater_id)
        )
        return {
            int(rater): Coverage(int(planned), int(done or 0), int(gone or 0), int(waiting or 0))
            for rater, planned, done, gone, waiting in self.db.execute(statement)
        }

    def find_request(
        self, project_id: int, rater_id: int, request_id: str
    ) -> dict[str, Any] | None:
        """The stored answer to an earlier plan request with this id, if any."""
        statement = select(RepeatRequest.response).where(
            RepeatRequest.project_id == project_id,
            RepeatRequest.rater_id == rater_id,
            RepeatRequest.request_id == request_id,
        )
        return self.db.execute(statement).scalar()

    def store_request(
        self, project_id: int, rater_id: int, request_id: str, now: int, response: dict[str, Any]
    ) -> None:
        self.db.execute(
            insert(RepeatRequest.__table__).values(
                project_id=project_id,
                rater_id=rater_id,
                request_id=request_id,
                created_at=now,
                response=response,
            )
        )

    def project_repeat_settings(self, project_id: int) -> tuple[RepeatSettings, float]:
        """The planner's settings of a project and its interval level."""
        project = self.db.get(Project, project_id)
        if project is None:
            raise LookupError(f"no project with id {project_id}")
        return project.repeat_settings(), project.interval_level

    def coverage_points(self, snapshot_id: int) -> dict[str, dict[str, dict[str, Any]]]:
        """{rater: {metric: {"value", "n"}}} of a snapshot's repeat coverage points."""
        statement = select(
            MetricPoint.subject_id, MetricPoint.metric, MetricPoint.value, MetricPoint.n
        ).where(
            MetricPoint.snapshot_id == snapshot_id,
            MetricPoint.subject_kind == "rater",
            MetricPoint.metric.in_(COVERAGE_METRICS),
        )
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for rater, metric, value, n in self.db.execute(statement):
            shown = int(value) if metric != "repeat_coverage" and value is not None else value
            out.setdefault(rater, {})[metric] = {"value": shown, "n": n}
        return out
