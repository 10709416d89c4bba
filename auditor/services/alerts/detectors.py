"""The change detectors of a ``rater_change`` rule, advanced incrementally (issue 21).

Each evaluation reads only the labels that arrived since the rule's watermark (and the older
labels of the items they touch, to compare with), turns them into evidence
(``auditor.alerting.change.evidence``) and advances each rater's CUSUM. The states are kept in
``alert_detectors`` as JSON, written in the recompute's transaction with the alert states.

A revert (labels at or below the watermark were deleted) restarts every detector of the rule:
the stream they had read is no longer the project's labels. The service restarts one rater's
detector when her episode resolves (``restart``).
"""

from __future__ import annotations

import json

from auditor.alerting import Observation, Rule
from auditor.alerting.change import (
    ChangeSettings,
    Label,
    Memory,
    RaterDetector,
    alarm,
    evidence,
    feed,
    restart,
)
from auditor.storage.unit_of_work import UnitOfWork

WATERMARK = ""  # the subject key of the row that holds the rule's watermark


class RuleDetectors:
    """The detectors of one rule, loaded once per evaluation call."""

    def __init__(self, uow: UnitOfWork, project_id: int, rule: Rule) -> None:
        self.alerts = uow.alerts
        self.project_id = project_id
        self.rule = rule
        limit = rule.condition.threshold
        if limit is None:
            raise ValueError(f"rule {rule.id}: rater_change needs its limit h")
        self.settings = ChangeSettings(limit=limit)
        stored = self.alerts.detector_states(rule.id)
        mark = json.loads(stored.pop(WATERMARK, "{}"))
        self.upto = int(mark.get("upto", 0))
        self.count = int(mark.get("count", 0))
        self.detectors = {
            key: RaterDetector.from_dict(json.loads(value)) for key, value in stored.items()
        }
        self.advanced = False

    def advance(self) -> None:
        """Read the labels since the watermark (once per call)."""
        if self.advanced:
            return
        self.advanced = True
        if self.upto and self.alerts.count_labels_upto(self.project_id, self.upto) < self.count:
            for detector in self.detectors.values():  # a revert: start again
                restart(detector)
        newest, total = self.alerts.label_watermark(self.project_id)
        if newest > self.upto:
            rows = self.alerts.human_labels_of_items_since(self.project_id, self.upto, newest)
            # the label id is the sequence: looks made under an alarm are no repeat reference
            old: list[Label] = [
                (item, rater, cat, label_id)
                for label_id, item, rater, cat in rows
                if label_id <= self.upto
            ]
            fresh: list[Label] = [
                (item, rater, cat, label_id)
                for label_id, item, rater, cat in rows
                if label_id > self.upto
            ]
            # the touched items' memory (latest label of each rater, read or not) as it was
            latest: Memory = {}
            for _ in evidence(old, latest):
                pass
            feed(self.detectors, fresh, latest, self.settings, key=lambda r: f"rater:{r}")
        self.upto, self.count = newest, total

    def subjects(self) -> list[str]:
        return sorted(self.detectors)

    def observation(self, subject_key: str) -> Observation:
        detector = self.detectors.get(subject_key)
        if detector is None or not detector.ready(self.settings):
            have = (
                ""
                if detector is None
                else f" ({detector.base_n['group']} group, {detector.base_n['repeat']} repeat"
                " comparisons)"
            )
            return Observation(None, n=0, reason=f"baseline still being learned{have}")
        return Observation(detector.statistic, n=max(detector.tested, 1))

    def alarm(self, subject_key: str) -> None:
        detector = self.detectors.get(subject_key)
        if detector is not None:
            alarm(detector)

    def restart(self, subject_key: str) -> None:
        detector = self.detectors.get(subject_key)
        if detector is not None:
            restart(detector)

    def save(self) -> None:
        states = {k: json.dumps(d.as_dict(), sort_keys=True) for k, d in self.detectors.items()}
        states[WATERMARK] = json.dumps({"upto": self.upto, "count": self.count})
        self.alerts.save_detector_states(self.rule.id, self.project_id, states)
