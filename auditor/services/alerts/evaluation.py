"""Alert evaluation after each snapshot: judge, step, log, and queue notices, in one transaction.

The recompute calls ``evaluate_snapshots`` inside its write transaction, so the new states,
their log rows and their outbox rows commit together with the snapshots, or not at all.

For every enabled rule of the project whose scope matches a written snapshot, and every
subject the rule selects:

1. the observation: the subject's metric point in that snapshot (value, interval, n), plus,
   for drop rules, the same point in the latest snapshot of the scope measured a lookback
   earlier; a subject with a state but no point is ``retired`` when its rater is gone from
   the project, else judged on no data (insufficient, never ok);
2. ``judge`` -> ``step`` at ``now = snapshot.as_of`` (simulated time in the demo, so replays
   are deterministic), silenced by any active silence;
3. one log row (unique per rule, subject and snapshot: a redelivered recompute finds it and
   skips the subject without stepping again), the state row, and one outbox row per notice and
   channel (unique per event id and channel).

Only this layer imports both ``auditor.alerting`` and ``auditor.notifiers``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from auditor.alerting import (
    AlertEvent,
    AlertState,
    ConditionKind,
    Judgement,
    Observation,
    Rule,
    Silence,
    Subject,
    SubjectKind,
    active_silence,
    judge,
    retired,
    step,
)
from auditor.alerting.defaults import EVIDENCE_POINT
from auditor.alerting.events import EventKind
from auditor.notifiers import Notification
from auditor.services.access.public_ids import public_ids_in
from auditor.services.alerts.detectors import RuleDetectors
from auditor.services.alerts.values import rule_of, silence_of, state_of, state_record
from auditor.snapshots.written import WrittenSnapshot
from auditor.storage.alert_records import (
    EvaluationRecord,
    OutboxRecord,
    PointRecord,
    SnapshotRef,
)
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

POINT_SUBJECT_KINDS = ("project", "rater", "model")
_POINT_FIELDS = tuple(f.name for f in dataclasses.fields(PointRecord))


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


def _observation(
    point: PointRecord, before: PointRecord | None, evidence_n: int | None
) -> Observation:
    return Observation(
        value=point.value,
        ci_low=point.ci_low,
        ci_high=point.ci_high,
        n=int(point.n or 0) if evidence_n is None else evidence_n,
        lookback_value=None if before is None else before.value,
        lookback_n=None if before is None else int(before.n or 0),
        lookback_ci_low=None if before is None else before.ci_low,
        lookback_ci_high=None if before is None else before.ci_high,
        reason=point.reason,
    )


class _Evaluator:
    """One call: the rules, states and silences of one project, over its new snapshots."""

    def __init__(self, uow: UnitOfWork, project_id: int, slug: str, rules: list[Rule]) -> None:
        self.alerts = uow.alerts
        self.log = uow.alert_log
        # The receiver is the project's: it gets the opaque snapshot ids its keys see.
        self.public_ids = public_ids_in(uow)
        self.project_id = project_id
        self.slug = slug
        self.rules = rules
        self.channel_ids = self.alerts.rule_channel_ids([r.id for r in rules])
        stored = self.alerts.states_of_rules([r.id for r in rules], for_update=True)
        self.states = {(r.rule_id, r.subject_key): state_of(r) for r in stored}
        self._raters: set[str] | None = None
        self.written = {"evaluations": 0, "notices": 0}
        self.detectors: dict[str, RuleDetectors] = {}
        self.uow = uow

    def rule_detectors(self, rule: Rule) -> RuleDetectors:
        found = self.detectors.get(rule.id)
        if found is None:
            found = self.detectors[rule.id] = RuleDetectors(self.uow, self.project_id, rule)
            found.advance()
        return found

    def save_detectors(self) -> None:
        for detectors in self.detectors.values():
            detectors.save()

    def raters(self) -> set[str]:
        if self._raters is None:
            self._raters = self.alerts.rater_ids(self.project_id)
        return self._raters

    def snapshot(
        self, snapshot: SnapshotRef, done: set[tuple[str, str, int]], written: WrittenSnapshot
    ) -> None:
        now = snapshot.as_of
        rules = [
            r for r in self.rules if r.scope == snapshot.scope and r.metric not in written.carried
        ]
        if not rules:
            return
        silences = [
            silence_of(record, self.slug)
            for record in self.alerts.silences_active(self.project_id, now)
        ]
        metrics = {r.metric for r in rules} | {
            EVIDENCE_POINT[r.metric] for r in rules if r.metric in EVIDENCE_POINT
        }
        points = [
            PointRecord(**{name: point[name] for name in _POINT_FIELDS})
            for point in written.points
            if point["metric"] in metrics
        ]
        self.points = points
        for rule in rules:
            for subject, point in self._subjects(rule, points).items():
                if (rule.id, subject.key, snapshot.id) in done:
                    continue  # evaluated before (a redelivered recompute): already logged
                self._evaluate(rule, subject, point, snapshot, silences)

    def _subjects(self, rule: Rule, points: list[PointRecord]) -> dict[Subject, PointRecord | None]:
        found: dict[Subject, PointRecord | None] = {}
        for point in points:
            if point.metric != rule.metric or point.subject_kind not in POINT_SUBJECT_KINDS:
                continue
            subject = Subject(SubjectKind(point.subject_kind), point.subject_id)
            if rule.subject.matches(subject):
                found[subject] = point
        if rule.subject.kind is not SubjectKind.EVERY_RATER:
            fixed = Subject(rule.subject.kind, rule.subject.ref)
            found.setdefault(fixed, None)  # watched even without a point: insufficient data
        if rule.condition.kind is ConditionKind.RATER_CHANGE:
            for key in self.rule_detectors(rule).subjects():
                subject = Subject(SubjectKind.RATER, key.split(":", 1)[1])
                if rule.subject.matches(subject):
                    found.setdefault(subject, None)
        for (rule_id, _key), state in self.states.items():
            if rule_id == rule.id:
                found.setdefault(state.subject, None)
        return dict(sorted(found.items(), key=lambda item: item[0].key))

    def _judge(
        self, rule: Rule, subject: Subject, point: PointRecord | None, snapshot: SnapshotRef
    ) -> tuple[Judgement, Observation | None]:
        if rule.condition.kind is ConditionKind.RATER_CHANGE:
            if subject.ref not in self.raters():
                return retired(f"{subject.key} is no longer in the project"), None
            observation = self.rule_detectors(rule).observation(subject.key)
            return judge(observation, rule), observation
        if point is None:
            if subject.kind is not SubjectKind.PROJECT and subject.ref not in self.raters():
                return retired(f"{subject.key} is no longer in the project"), None
            observation = Observation(None, n=0, reason=f"no {rule.metric} point for {subject.key}")
            return judge(observation, rule), observation
        before = None
        lookback = rule.condition.lookback
        if rule.condition.kind is ConditionKind.DROP and lookback is not None:
            before = self.alerts.point_before(
                self.project_id,
                snapshot.scope,
                rule.metric,
                subject.kind.value,
                subject.ref,
                snapshot.as_of - lookback,
            )
        evidence_n = None
        gate = EVIDENCE_POINT.get(rule.metric)
        if gate is not None:
            # the n the measure rests on (rho: the repeated items behind each rater's Y)
            evidence_n = next(
                (
                    int(p.n or 0)
                    for p in self.points
                    if p.metric == gate
                    and p.subject_kind == subject.kind.value
                    and p.subject_id == subject.ref
                ),
                0,
            )
        observation = _observation(point, before, evidence_n)
        return judge(observation, rule), observation

    def _evaluate(
        self,
        rule: Rule,
        subject: Subject,
        point: PointRecord | None,
        snapshot: SnapshotRef,
        silences: list[Silence],
    ) -> None:
        now = snapshot.as_of
        key = (rule.id, subject.key)
        state = self.states.get(key) or AlertState(rule.id, subject)
        if state.evaluated_at is not None and now < state.evaluated_at:
            log.warning(
                "alert %s %s: snapshot %s (as of %s) is older than the last evaluation; skipped",
                rule.id,
                subject.key,
                snapshot.id,
                now,
            )
            return
        judgement, observation = self._judge(rule, subject, point, snapshot)
        silence = active_silence(silences, rule, subject, now)
        transition = step(state, judgement, rule, now, silenced=silence is not None)
        value = None if observation is None else observation.value
        logged = self.log.insert_evaluation(
            EvaluationRecord(
                id=None,
                project_id=self.project_id,
                rule_id=rule.id,
                subject_key=subject.key,
                snapshot_id=snapshot.id,
                evaluated_at=now,
                verdict=judgement.verdict.value,
                judged_value=judgement.judged_value,
                limit_value=judgement.limit,
                value=value,
                ci_low=None if observation is None else observation.ci_low,
                ci_high=None if observation is None else observation.ci_high,
                n=None if observation is None else observation.n,
                lookback_value=None if observation is None else observation.lookback_value,
                reason=judgement.reason,
                from_status=transition.previous.status.value,
                to_status=transition.state.status.value,
                silence_id=None if silence is None else int(silence.id),
                event_ids=[e.event_id for e in transition.events],
                suppressed_event_ids=[e.event_id for e in transition.suppressed],
            )
        )
        if not logged:
            return  # evaluated by someone else in the meantime: do not step twice
        self.alerts.upsert_state(
            state_record(
                transition.state,
                self.project_id,
                snapshot_id=snapshot.id,
                value=value,
                reason=judgement.reason,
            )
        )
        self.states[key] = transition.state
        self.written["evaluations"] += 1
        if rule.condition.kind is ConditionKind.RATER_CHANGE and any(
            e.kind is EventKind.RESOLVED for e in (*transition.events, *transition.suppressed)
        ):
            self.rule_detectors(rule).restart(subject.key)  # retrained: learn her anew
        if rule.condition.kind is ConditionKind.RATER_CHANGE and any(
            e.kind is EventKind.FIRING for e in (*transition.events, *transition.suppressed)
        ):
            self.rule_detectors(rule).alarm(subject.key)  # her looks so far: no reference
        created = datetime.now(UTC)
        shown = self.public_ids.encode("snapshot", self.project_id, snapshot.id)
        notices = []
        for event in transition.events:
            body = notification_for(event, rule, observation, shown).to_json_bytes()
            for channel_id in self.channel_ids.get(rule.id, []):
                notices.append(
                    OutboxRecord(
                        id=None,
                        event_id=event.event_id,
                        channel_id=channel_id,
                        project_id=self.project_id,
                        rule_id=rule.id,
                        subject_key=subject.key,
                        kind=event.kind.value,
                        sequence=event.sequence,
                        body=body.decode("utf-8"),
                        status="pending",
                        attempts=0,
                        next_attempt_at=created,
                        created_at=created,
                    )
                )
        if notices:
            self.written["notices"] += self.log.insert_outbox(notices)
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
    uow: UnitOfWork, project_id: int, written: Sequence[WrittenSnapshot]
) -> dict[str, int]:
    """Evaluate the project's enabled rules on the snapshots just written.

    Runs inside the caller's open transaction and never commits. Returns counts of log rows
    and outbox rows written (for tests and logs).
    """
    if not written:
        return {"evaluations": 0, "notices": 0}
    slug = uow.alerts.project_slug(project_id)
    records = uow.alerts.list_rules(project_id, enabled_only=True)
    if slug is None or not records:
        return {"evaluations": 0, "notices": 0}
    evaluator = _Evaluator(uow, project_id, slug, [rule_of(r, slug) for r in records])
    snapshot_ids = [w.id for w in written]
    by_id = {w.id: w for w in written}
    done = uow.alert_log.evaluated_keys(snapshot_ids)
    for snapshot in uow.alerts.snapshots(snapshot_ids):
        evaluator.snapshot(snapshot, done, by_id[snapshot.id])
    evaluator.save_detectors()
    return evaluator.written
