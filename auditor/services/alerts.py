"""Alert evaluation after each snapshot: judge, step, log, and queue notices, in one transaction.

``evaluate_snapshots`` is registered with ``auditor.services.audit.add_snapshot_hook`` when
this module is imported (the CLI, the workers and the embedded loop import it). It runs inside
the recompute's write transaction, so the new states, their log rows and their outbox rows
commit together with the snapshots, or not at all.

For every enabled rule of the project whose scope matches a written snapshot, and every
subject the rule selects:

1. the observation: the subject's metric point in that snapshot (value, interval, n), plus,
   for drop rules, the same point in the latest snapshot of the scope measured a lookback
   earlier; a subject with a state but no point is ``retired`` when its rater is gone from
   the project, else judged on no data (insufficient, never ok);
2. ``judge`` -> ``step`` at ``now = snapshot.as_of`` (simulated time in the demo, so replays
   are deterministic), silenced by any active silence;
3. one log row (unique per rule, subject and snapshot: a redelivered hook finds it and skips
   the subject without stepping again), the state row, and one outbox row per notice and
   channel (unique per event id and channel).

Only this layer imports both ``auditor.alerting`` and ``auditor.notifiers``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.alerting import (
    AlertEvent,
    AlertState,
    AlertStatus,
    Condition,
    ConditionKind,
    Judgement,
    Observation,
    Rule,
    Severity,
    Silence,
    Subject,
    SubjectKind,
    SubjectSelector,
    active_silence,
    judge,
    retired,
    step,
)
from auditor.notifiers import Notification
from auditor.services.access.public_ids import public_ids_in
from auditor.services.recompute import recompute as audit
from auditor.storage import alert_repository as repo
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

POINT_SUBJECT_KINDS = ("project", "rater", "model")


# --- rows <-> alerting values ---------------------------------------------------------------


def _seconds(delta: timedelta | None) -> int | None:
    return None if delta is None else int(delta.total_seconds())


def _delta(seconds: int | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)


def rule_from_row(row: dict[str, Any], project: str) -> Rule:
    """A stored rule as the pure ``Rule`` (re-validated by its ``__post_init__``)."""
    return Rule(
        id=row["id"],
        project=project,
        metric=row["metric"],
        subject=SubjectSelector(SubjectKind(row["subject_kind"]), row["subject_ref"] or ""),
        condition=Condition(
            ConditionKind(row["condition_kind"]),
            threshold=row["threshold"],
            drop=row["drop_by"],
            lookback=_delta(row["lookback_seconds"]),
        ),
        scope=row["scope"],
        min_n=row["min_n"],
        for_=timedelta(seconds=row["for_seconds"]),
        keep_firing_for=timedelta(seconds=row["keep_firing_for_seconds"]),
        severity=Severity(row["severity"]),
        channels=tuple(row.get("channels", ())),
        repeat_interval=_delta(row["repeat_interval_seconds"]),
        enabled=bool(row["enabled"]),
    )


def rule_to_values(rule: Rule, project_id: int, created_at: datetime) -> dict[str, Any]:
    return {
        "id": rule.id,
        "project_id": project_id,
        "metric": rule.metric,
        "subject_kind": rule.subject.kind.value,
        "subject_ref": rule.subject.ref,
        "scope": rule.scope,
        "condition_kind": rule.condition.kind.value,
        "threshold": rule.condition.threshold,
        "drop_by": rule.condition.drop,
        "lookback_seconds": _seconds(rule.condition.lookback),
        "min_n": rule.min_n,
        "for_seconds": _seconds(rule.for_),
        "keep_firing_for_seconds": _seconds(rule.keep_firing_for),
        "severity": rule.severity.value,
        "repeat_interval_seconds": _seconds(rule.repeat_interval),
        "enabled": rule.enabled,
        "created_at": created_at,
    }


_STATE_TIMES = (
    "evaluated_at",
    "status_since",
    "breach_since",
    "episode_start",
    "clear_since",
    "data_missing_since",
    "last_notified_at",
)


def state_from_row(row: dict[str, Any]) -> AlertState:
    subject = Subject(SubjectKind(row["subject_kind"]), row["subject_ref"])
    return AlertState(
        rule_id=row["rule_id"],
        subject=subject,
        status=AlertStatus(row["status"]),
        firing_notified=bool(row["firing_notified"]),
        repeat_seq=int(row["repeat_seq"]),
        **{name: row[name] for name in _STATE_TIMES},
    )


def state_to_values(state: AlertState, project_id: int) -> dict[str, Any]:
    values: dict[str, Any] = {
        "rule_id": state.rule_id,
        "subject_key": state.subject.key,
        "project_id": project_id,
        "subject_kind": state.subject.kind.value,
        "subject_ref": state.subject.ref,
        "status": state.status.value,
        "firing_notified": state.firing_notified,
        "repeat_seq": state.repeat_seq,
    }
    values.update({name: getattr(state, name) for name in _STATE_TIMES})
    return values


def silence_from_row(row: dict[str, Any], project: str) -> Silence:
    subject = None
    if row["subject_kind"] is not None:
        subject = Subject(SubjectKind(row["subject_kind"]), row["subject_ref"] or "")
    return Silence(
        id=str(row["id"]),
        project=project,
        starts_at=row["starts_at"],
        ends_at=row["ends_at"],
        rule_id=row["rule_id"],
        subject=subject,
        reason=row["reason"] or "",
        created_by=row["created_by"] or "",
    )


def notification_for(
    event: AlertEvent, rule: Rule, observation: Observation | None, snapshot_id: int
) -> Notification:
    """The notice a receiver gets for ``event`` (the outbox keeps its exact JSON)."""
    judgement = event.judgement
    return Notification(
        event_id=event.event_id,
        kind=event.kind.value,
        sequence=event.sequence,
        project=rule.project,
        rule_id=rule.id,
        severity=rule.severity.value,
        condition=rule.condition.kind.value,
        subject=event.subject.key,
        metric=rule.metric,
        scope=rule.scope,
        value=None if observation is None else observation.value,
        ci_low=None if observation is None else observation.ci_low,
        ci_high=None if observation is None else observation.ci_high,
        n=None if observation is None else observation.n,
        judged_value=judgement.judged_value,
        threshold=judgement.limit,
        reason=judgement.reason,
        note=event.note,
        episode_started_at=event.episode_start,
        occurred_at=event.occurred_at,
        snapshot_id=snapshot_id,
    )


# --- evaluation -----------------------------------------------------------------------------


def _observation(point: dict[str, Any], lookback_value: float | None) -> Observation:
    return Observation(
        value=point["value"],
        ci_low=point["ci_low"],
        ci_high=point["ci_high"],
        n=int(point["n"] or 0),
        lookback_value=lookback_value,
        reason=point["reason"],
    )


class _Evaluator:
    """One hook call: the rules, states and silences of one project, over its new snapshots."""

    def __init__(self, uow: UnitOfWork, project_id: int, slug: str, rules: list[Rule]) -> None:
        self.db = uow.session
        self.project_id = project_id
        self.slug = slug
        self.rules = rules
        self.channel_ids = repo.rule_channel_ids(self.db, [r.id for r in rules])
        rows = repo.states_of_rules(self.db, [r.id for r in rules], for_update=True)
        self.states = {key: state_from_row(row) for key, row in rows.items()}
        self._raters: set[str] | None = None
        self.written = {"evaluations": 0, "notices": 0}

    def raters(self) -> set[str]:
        if self._raters is None:
            self._raters = repo.rater_ids(self.db, self.project_id)
        return self._raters

    def snapshot(self, snapshot: dict[str, Any], done: set[tuple[str, str, int]]) -> None:
        now: datetime = snapshot["as_of"]
        rules = [r for r in self.rules if r.scope == snapshot["scope"]]
        if not rules:
            return
        silences = [
            silence_from_row(row, self.slug)
            for row in repo.silences_active(self.db, self.project_id, now)
        ]
        points = repo.points_of_snapshot(self.db, snapshot["id"], {r.metric for r in rules})
        for rule in rules:
            for subject, point in self._subjects(rule, points).items():
                if (rule.id, subject.key, snapshot["id"]) in done:
                    continue  # a redelivered hook: this evaluation is already logged
                self._evaluate(rule, subject, point, snapshot, now, silences)

    def _subjects(self, rule: Rule, points: list[dict]) -> dict[Subject, dict | None]:
        found: dict[Subject, dict | None] = {}
        for point in points:
            if point["metric"] != rule.metric or point["subject_kind"] not in POINT_SUBJECT_KINDS:
                continue
            subject = Subject(SubjectKind(point["subject_kind"]), point["subject_id"])
            if rule.subject.matches(subject):
                found[subject] = point
        if rule.subject.kind is not SubjectKind.EVERY_RATER:
            fixed = Subject(rule.subject.kind, rule.subject.ref)
            found.setdefault(fixed, None)  # watched even without a point: insufficient data
        for (rule_id, _key), state in self.states.items():
            if rule_id == rule.id:
                found.setdefault(state.subject, None)
        return dict(sorted(found.items(), key=lambda item: item[0].key))

    def _judge(
        self, rule: Rule, subject: Subject, point: dict | None, snapshot: dict, now: datetime
    ) -> tuple[Judgement, Observation | None]:
        if point is None:
            if subject.kind is not SubjectKind.PROJECT and subject.ref not in self.raters():
                return retired(f"{subject.key} is no longer in the project"), None
            observation = Observation(None, n=0, reason=f"no {rule.metric} point for {subject.key}")
            return judge(observation, rule), observation
        lookback_value = None
        lookback = rule.condition.lookback
        if rule.condition.kind is ConditionKind.DROP and lookback is not None:
            before = repo.point_before(
                self.db,
                self.project_id,
                snapshot["scope"],
                rule.metric,
                subject.kind.value,
                subject.ref,
                now - lookback,
            )
            lookback_value = None if before is None else before["value"]
        observation = _observation(point, lookback_value)
        return judge(observation, rule), observation

    def _evaluate(
        self,
        rule: Rule,
        subject: Subject,
        point: dict | None,
        snapshot: dict,
        now: datetime,
        silences: list[Silence],
    ) -> None:
        key = (rule.id, subject.key)
        state = self.states.get(key) or AlertState(rule.id, subject)
        if state.evaluated_at is not None and now < state.evaluated_at:
            log.warning(
                "alert %s %s: snapshot %s (as of %s) is older than the last evaluation; skipped",
                rule.id,
                subject.key,
                snapshot["id"],
                now,
            )
            return
        judgement, observation = self._judge(rule, subject, point, snapshot, now)
        silence = active_silence(silences, rule, subject, now)
        transition = step(state, judgement, rule, now, silenced=silence is not None)
        logged = repo.insert_evaluation(
            self.db,
            {
                "project_id": self.project_id,
                "rule_id": rule.id,
                "subject_key": subject.key,
                "snapshot_id": snapshot["id"],
                "evaluated_at": now,
                "verdict": judgement.verdict.value,
                "judged_value": judgement.judged_value,
                "limit_value": judgement.limit,
                "value": None if observation is None else observation.value,
                "ci_low": None if observation is None else observation.ci_low,
                "ci_high": None if observation is None else observation.ci_high,
                "n": None if observation is None else observation.n,
                "lookback_value": None if observation is None else observation.lookback_value,
                "reason": judgement.reason,
                "from_status": transition.previous.status.value,
                "to_status": transition.state.status.value,
                "silence_id": None if silence is None else int(silence.id),
                "event_ids": [e.event_id for e in transition.events],
                "suppressed_event_ids": [e.event_id for e in transition.suppressed],
            },
        )
        if not logged:
            return  # evaluated by someone else in the meantime: do not step twice
        values = state_to_values(transition.state, self.project_id)
        values["last_snapshot_id"] = snapshot["id"]
        values["last_value"] = None if observation is None else observation.value
        values["last_reason"] = judgement.reason
        repo.upsert_state(self.db, values)
        self.states[key] = transition.state
        self.written["evaluations"] += 1
        created = datetime.now(UTC)
        rows = []
        # The receiver is the project's: it gets the opaque snapshot id its keys see.
        shown = public_ids_in(self.db).encode("snapshot", self.project_id, snapshot["id"])
        for event in transition.events:
            body = notification_for(event, rule, observation, shown).to_json_bytes()
            for channel_id in self.channel_ids.get(rule.id, []):
                rows.append(
                    {
                        "event_id": event.event_id,
                        "channel_id": channel_id,
                        "project_id": self.project_id,
                        "rule_id": rule.id,
                        "subject_key": subject.key,
                        "kind": event.kind.value,
                        "sequence": event.sequence,
                        "body": body.decode("utf-8"),
                        "status": "pending",
                        "attempts": 0,
                        "next_attempt_at": created,
                        "created_at": created,
                    }
                )
        if rows:
            self.written["notices"] += repo.insert_outbox(self.db, rows)
        if transition.changed or transition.events:
            log.info(
                "alert %s %s: %s -> %s (%s)%s",
                rule.id,
                subject.key,
                transition.previous.status.value,
                transition.state.status.value,
                judgement.reason,
                "".join(f" [{e.kind.value} {e.event_id}]" for e in transition.events),
            )


def evaluate_snapshots(
    uow: UnitOfWork, project_id: int, written: Sequence[audit.WrittenSnapshot]
) -> dict[str, int]:
    """Evaluate the project's enabled rules on the snapshots just written (the hook).

    Runs inside the caller's open transaction and never commits. Returns counts of log rows
    and outbox rows written (for tests and logs).
    """
    if not written:
        return {"evaluations": 0, "notices": 0}
    db = uow.session
    slug = repo.project_slug(db, project_id)
    rows = repo.list_rules(db, project_id, enabled_only=True)
    if slug is None or not rows:
        return {"evaluations": 0, "notices": 0}
    evaluator = _Evaluator(uow, project_id, slug, [rule_from_row(r, slug) for r in rows])
    snapshot_ids = [w.id for w in written]
    done = repo.evaluated_keys(db, snapshot_ids)
    for snapshot in repo.snapshots_by_id(db, snapshot_ids):
        evaluator.snapshot(snapshot, done)
    return evaluator.written


def _hook(uow: UnitOfWork, project_id: int, written: Sequence[audit.WrittenSnapshot]) -> None:
    evaluate_snapshots(uow, project_id, written)


_installed: list[bool] = []


def install_hook() -> None:
    """Register the evaluation with the recompute (idempotent; done on import)."""
    if not _installed:
        audit.add_snapshot_hook(_hook)
        _installed.append(True)


install_hook()
