"""Silences of a project: mute notices of a rule, a subject, or both, until a time.

States keep moving under a silence; only the notices are held back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from auditor.alerting import Silence, Subject, SubjectKind
from auditor.domain import time_out_of_range
from auditor.errors import Invalid, NotFound
from auditor.services.alerts.common import now, own_rule, parse_subject, project_id
from auditor.services.alerts.values import silence_subject
from auditor.storage.alert_records import SilenceRecord
from auditor.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class SilenceView:
    id: int
    rule_id: str | None
    subject: str | None
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str


def silence_view(record: SilenceRecord) -> SilenceView:
    subject = silence_subject(record)
    return SilenceView(
        record.id or 0,
        record.rule_id,
        None if subject is None else subject.key,
        record.starts_at,
        record.ends_at,
        record.reason,
        record.created_by,
    )


def add_silence(
    uow: UnitOfWork,
    project: str,
    *,
    ends_at: datetime,
    rule_id: str | None = None,
    subject: str | None = None,
    starts_at: datetime | None = None,
    reason: str = "",
    created_by: str = "",
) -> SilenceView:
    """Mute notices of a rule, a subject, or both, until ``ends_at`` (state keeps moving)."""
    starts = starts_at or now()
    for name, moment in (("starts_at", starts), ("ends_at", ends_at)):
        out_of_range = time_out_of_range(moment)
        if out_of_range is not None:  # e.g. --for 999999d: a silence every recompute reads
            raise Invalid(f"{name}: {out_of_range}", field=name)
    parsed = None
    if subject is not None:
        selector = parse_subject(subject)
        if selector.kind is SubjectKind.EVERY_RATER:
            raise Invalid(
                "a silence names one subject: project, rater:ID or model:ID", field="subject"
            )
        parsed = Subject(selector.kind, selector.ref)
    with uow:
        owner = project_id(uow, project)
        full = None if rule_id is None else own_rule(uow, project, rule_id)
        Silence("new", project, starts, ends_at, full, parsed, reason, created_by)  # checks
        record = uow.alerts.insert_silence(
            SilenceRecord(
                id=None,
                project_id=owner,
                rule_id=full,
                subject_kind=None if parsed is None else parsed.kind.value,
                subject_ref=None if parsed is None else parsed.ref,
                starts_at=starts,
                ends_at=ends_at,
                reason=reason,
                created_by=created_by,
                created_at=now(),
            )
        )
        uow.commit()
    return silence_view(record)


def list_silences(
    uow: UnitOfWork, project: str, *, include_ended: bool = False
) -> list[SilenceView]:
    with uow:
        owner = project_id(uow, project)
        records = uow.alerts.list_silences(owner, active_at=None if include_ended else now())
    return [silence_view(r) for r in records]


def end_silence(uow: UnitOfWork, project: str, silence_id: int) -> None:
    with uow:
        if not uow.alerts.end_silence(project_id(uow, project), silence_id, now()):
            raise NotFound(f"project {project!r} has no active silence {silence_id}")
        uow.commit()
