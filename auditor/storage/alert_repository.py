"""Reads and writes of alert channels, rules, states and silences, as typed records.

``AlertRepository`` works inside the unit of work's transaction (``uow.alerts``) and returns
the records of ``auditor.storage.alert_records``; nothing here commits. The evaluation log
and the outbox are in ``auditor.storage.alert_log_repository`` (``uow.alert_log``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Table, and_, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from auditor.storage.alert_models import (
    AlertChannel,
    AlertDetector,
    AlertRule,
    AlertRuleChannel,
    AlertSilence,
    AlertStateRow,
)
from auditor.storage.alert_records import (
    ChannelRecord,
    PointRecord,
    RuleRecord,
    SilenceRecord,
    SnapshotRef,
    StateRecord,
)
from auditor.storage.db import affected
from auditor.storage.models import Category, Item, Label, Project, Rater
from auditor.storage.snapshot_models import MetricPoint, Snapshot

_channels: Table = AlertChannel.__table__  # type: ignore[assignment]
_rules: Table = AlertRule.__table__  # type: ignore[assignment]
_rule_channels: Table = AlertRuleChannel.__table__  # type: ignore[assignment]
_states: Table = AlertStateRow.__table__  # type: ignore[assignment]
_silences: Table = AlertSilence.__table__  # type: ignore[assignment]
_detectors: Table = AlertDetector.__table__  # type: ignore[assignment]

R = TypeVar("R")


def records(cls: type[R], result: Iterable[Any]) -> list[R]:
    """Rows as records of ``cls`` (the query selects exactly its columns)."""
    return [cls(**row._mapping) for row in result]


def values_of(record: Any, *, without: Sequence[str] = ()) -> dict[str, Any]:
    """A record's column values for an INSERT (an unset ``id`` is left to the database)."""
    values = dataclasses.asdict(record)
    if values.get("id", 0) is None:
        del values["id"]
    for name in without:
        values.pop(name, None)
    return values


def changed(result: Any) -> bool:
    """Whether an UPDATE or DELETE touched a row (its cursor's rowcount)."""
    return affected(result) > 0


def upsert(db: Session) -> Any:
    return postgresql.insert if db.get_bind().dialect.name == "postgresql" else sqlite.insert


class AlertRepository:
    def __init__(self, session: Session) -> None:
        self.db = session

    # --- projects, snapshots, points ----------------------------------------------------------

    def project_slug(self, project_id: int) -> str | None:
        return self.db.execute(select(Project.slug).where(Project.id == project_id)).scalar()

    def snapshots(self, ids: Sequence[int]) -> list[SnapshotRef]:
        """The given snapshots, oldest first."""
        s = Snapshot
        query = select(s.id, s.project_id, s.scope, s.tick, s.as_of).where(s.id.in_(list(ids)))
        return records(SnapshotRef, self.db.execute(query.order_by(s.as_of, s.id)))

    def points_of_snapshot(self, snapshot_id: int, metrics: Iterable[str]) -> list[PointRecord]:
        p = MetricPoint
        query = select(
            p.metric, p.subject_kind, p.subject_id, p.value, p.ci_low, p.ci_high, p.n, p.reason
        ).where(p.snapshot_id == snapshot_id, p.metric.in_(sorted(set(metrics))))
        return records(PointRecord, self.db.execute(query))

    def point_before(
        self,
        project_id: int,
        scope: str,
        metric: str,
        subject_kind: str,
        subject_id: str,
        at: datetime,
    ) -> PointRecord | None:
        """The point of (metric, subject) in the latest snapshot of ``scope`` with as_of <=
        ``at``; None when there is no such snapshot or it has no point for the subject (a
        lookback compares with the view as it was then, not with an older one)."""
        latest = self.db.execute(
            select(Snapshot.id)
            .where(Snapshot.project_id == project_id, Snapshot.scope == scope, Snapshot.as_of <= at)
            .order_by(Snapshot.as_of.desc(), Snapshot.tick.desc())
            .limit(1)
        ).scalar()
        if latest is None:
            return None
        p = MetricPoint
        found = records(
            PointRecord,
            self.db.execute(
                select(
                    p.metric,
                    p.subject_kind,
                    p.subject_id,
                    p.value,
                    p.ci_low,
                    p.ci_high,
                    p.n,
                    p.reason,
                ).where(
                    p.snapshot_id == latest,
                    p.metric == metric,
                    p.subject_kind == subject_kind,
                    p.subject_id == subject_id,
                )
            ),
        )
        return found[0] if found else None

    def value_before(
        self,
        project_id: int,
        scope: str,
        metric: str,
        subject_kind: str,
        subject_id: str,
        at: datetime,
    ) -> float | None:
        """The value of ``point_before`` (None without one)."""
        point = self.point_before(project_id, scope, metric, subject_kind, subject_id, at)
        return None if point is None else point.value

    # --- change detectors (rater_change rules) -------------------------------------------------

    def detector_states(self, rule_id: str) -> dict[str, str]:
        """subject key -> the JSON state of a rule's detectors ('' : the rule's watermark)."""
        d = _detectors.c
        rows = self.db.execute(select(d.subject_key, d.state).where(d.rule_id == rule_id))
        return {key: state for key, state in rows}

    def save_detector_states(self, rule_id: str, project_id: int, states: dict[str, str]) -> None:
        d = _detectors.c
        self.db.execute(delete(_detectors).where(d.rule_id == rule_id))
        if states:
            self.db.execute(
                _detectors.insert(),
                [
                    {"rule_id": rule_id, "subject_key": k, "project_id": project_id, "state": v}
                    for k, v in states.items()
                ],
            )

    def label_watermark(self, project_id: int) -> tuple[int, int]:
        """(highest label id, number of labels) of the project."""
        from sqlalchemy import func

        row = self.db.execute(
            select(func.coalesce(func.max(Label.id), 0), func.count(Label.id)).where(
                Label.project_id == project_id
            )
        ).one()
        return int(row[0]), int(row[1])

    def count_labels_upto(self, project_id: int, label_id: int) -> int:
        from sqlalchemy import func

        return int(
            self.db.execute(
                select(func.count(Label.id)).where(
                    Label.project_id == project_id, Label.id <= label_id
                )
            ).scalar_one()
        )

    def human_labels_of_items_since(
        self, project_id: int, after_id: int, upto_id: int
    ) -> list[tuple[int, str, str, str]]:
        """(label id, item, rater, category) of human raters' labels on the items that got a
        label with id in (after_id, upto_id], every label of those items up to upto_id, in id
        order (the older ones are what the new ones are compared with)."""
        touched = (
            select(Label.item_id)
            .where(Label.project_id == project_id, Label.id > after_id, Label.id <= upto_id)
            .distinct()
        )
        query = (
            select(Label.id, Item.external_id, Rater.external_id, Category.name)
            .join(Item, Item.id == Label.item_id)
            .join(Rater, Rater.id == Label.rater_id)
            .join(Category, Category.id == Label.category_id)
            .where(
                Label.project_id == project_id,
                Label.id <= upto_id,
                Label.item_id.in_(touched),
                Rater.kind == "human",
            )
            .order_by(Label.id)
        )
        return [(int(a), str(b), str(c), str(e)) for a, b, c, e in self.db.execute(query)]

    def rater_ids(self, project_id: int) -> set[str]:
        """External ids of the project's raters (humans and models)."""
        rows = self.db.execute(select(Rater.external_id).where(Rater.project_id == project_id))
        return {row[0] for row in rows}

    # --- channels -----------------------------------------------------------------------------

    def insert_channel(self, channel: ChannelRecord) -> ChannelRecord:
        statement = _channels.insert().values(**values_of(channel)).returning(_channels.c.id)
        return dataclasses.replace(channel, id=int(self.db.execute(statement).scalar_one()))

    def find_channel(self, project_id: int, name: str) -> ChannelRecord | None:
        c = _channels.c
        query = select(_channels).where(c.project_id == project_id, c.name == name)
        found = records(ChannelRecord, self.db.execute(query))
        return found[0] if found else None

    def list_channels(self, project_id: int) -> list[ChannelRecord]:
        query = select(_channels).where(_channels.c.project_id == project_id)
        return records(ChannelRecord, self.db.execute(query.order_by(_channels.c.name)))

    def update_channel(self, channel: ChannelRecord) -> None:
        """Store a channel's config and timeout (its id, name and kind stay)."""
        statement = (
            update(_channels)
            .where(_channels.c.id == channel.id)
            .values(config=channel.config, timeout_seconds=channel.timeout_seconds)
        )
        self.db.execute(statement)

    def channels_by_id(self, ids: Iterable[int]) -> dict[int, ChannelRecord]:
        query = select(_channels).where(_channels.c.id.in_(sorted(set(ids))))
        return {c.id: c for c in records(ChannelRecord, self.db.execute(query)) if c.id}

    def rules_using_channel(self, channel_id: int) -> list[str]:
        rc = _rule_channels.c
        query = select(rc.rule_id).where(rc.channel_id == channel_id)
        return sorted(row[0] for row in self.db.execute(query))

    def delete_channel(self, channel_id: int) -> None:
        self.db.execute(delete(_channels).where(_channels.c.id == channel_id))

    # --- rules --------------------------------------------------------------------------------

    def insert_rule(self, rule: RuleRecord, channel_ids: Sequence[int]) -> None:
        self.db.execute(_rules.insert().values(**values_of(rule, without=("channels",))))
        if channel_ids:
            self.db.execute(
                _rule_channels.insert(),
                [{"rule_id": rule.id, "channel_id": cid} for cid in channel_ids],
            )

    def add_rule_channels(self, rule_id: str, channel_ids: Sequence[int]) -> None:
        if channel_ids:
            self.db.execute(
                _rule_channels.insert(),
                [{"rule_id": rule_id, "channel_id": cid} for cid in channel_ids],
            )

    def _with_channels(self, result: Iterable[Any]) -> list[RuleRecord]:
        rules = records(RuleRecord, result)
        if not rules:
            return rules
        rc = _rule_channels.c
        query = (
            select(rc.rule_id, _channels.c.name)
            .join(_channels, _channels.c.id == rc.channel_id)
            .where(rc.rule_id.in_([r.id for r in rules]))
        )
        names: dict[str, list[str]] = {}
        for rule_id, name in self.db.execute(query):
            names.setdefault(rule_id, []).append(name)
        return [dataclasses.replace(r, channels=tuple(sorted(names.get(r.id, [])))) for r in rules]

    def find_rule(self, rule_id: str) -> RuleRecord | None:
        found = self._with_channels(self.db.execute(select(_rules).where(_rules.c.id == rule_id)))
        return found[0] if found else None

    def list_rules(self, project_id: int, *, enabled_only: bool = False) -> list[RuleRecord]:
        query = select(_rules).where(_rules.c.project_id == project_id)
        if enabled_only:
            query = query.where(_rules.c.enabled.is_(True))
        return self._with_channels(self.db.execute(query.order_by(_rules.c.id)))

    def rule_channel_ids(self, rule_ids: Iterable[str]) -> dict[str, list[int]]:
        rc = _rule_channels.c
        query = select(rc.rule_id, rc.channel_id).where(rc.rule_id.in_(sorted(set(rule_ids))))
        found: dict[str, list[int]] = {}
        for rule_id, channel_id in self.db.execute(query):
            found.setdefault(rule_id, []).append(channel_id)
        return found

    def delete_rule(self, rule_id: str) -> bool:
        return changed(self.db.execute(delete(_rules).where(_rules.c.id == rule_id)))

    def set_rule_enabled(self, rule_id: str, enabled: bool) -> bool:
        statement = update(_rules).where(_rules.c.id == rule_id).values(enabled=enabled)
        return changed(self.db.execute(statement))

    # --- states -------------------------------------------------------------------------------

    def states_of_rules(
        self, rule_ids: Iterable[str], *, for_update: bool = False
    ) -> list[StateRecord]:
        """The states of the rules; rows locked (FOR UPDATE) on PostgreSQL if asked."""
        query = select(_states).where(_states.c.rule_id.in_(sorted(set(rule_ids))))
        if for_update:
            query = query.with_for_update()  # SQLite: the write transaction is the lock
        return records(StateRecord, self.db.execute(query))

    def upsert_state(self, state: StateRecord) -> None:
        values = values_of(state)
        statement = upsert(self.db)(_states).values(**values)
        keys = ("rule_id", "subject_key")
        changes = {k: statement.excluded[k] for k in values if k not in keys}
        self.db.execute(statement.on_conflict_do_update(index_elements=list(keys), set_=changes))

    def list_states(self, project_id: int) -> list[StateRecord]:
        s = _states.c
        query = select(_states).where(s.project_id == project_id)
        return records(StateRecord, self.db.execute(query.order_by(s.rule_id, s.subject_key)))

    # --- silences -----------------------------------------------------------------------------

    def insert_silence(self, silence: SilenceRecord) -> SilenceRecord:
        statement = _silences.insert().values(**values_of(silence)).returning(_silences.c.id)
        return dataclasses.replace(silence, id=int(self.db.execute(statement).scalar_one()))

    def silences_active(self, project_id: int, at: datetime) -> list[SilenceRecord]:
        s = _silences.c
        query = select(_silences).where(
            and_(s.project_id == project_id, s.starts_at <= at, s.ends_at > at)
        )
        return records(SilenceRecord, self.db.execute(query.order_by(s.id)))

    def list_silences(
        self, project_id: int, *, active_at: datetime | None = None
    ) -> list[SilenceRecord]:
        s = _silences.c
        query = select(_silences).where(s.project_id == project_id)
        if active_at is not None:
            query = query.where(s.ends_at > active_at)
        return records(SilenceRecord, self.db.execute(query.order_by(s.ends_at, s.id)))

    def end_silence(self, project_id: int, silence_id: int, at: datetime) -> bool:
        """End a silence at ``at``: an active one keeps its row (the record of what was
        muted), one that has not started yet is deleted. False when there is no such unended
        silence."""
        s = _silences.c
        mine = and_(s.id == silence_id, s.project_id == project_id, s.ends_at > at)
        if changed(self.db.execute(delete(_silences).where(mine, s.starts_at >= at))):
            return True
        statement = update(_silences).where(mine).values(ends_at=at)
        return changed(self.db.execute(statement))
