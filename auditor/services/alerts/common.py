"""What the alert services share: the project lookup, names, subjects, rule ids, the clock."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor.alerting import SubjectKind, SubjectSelector
from auditor.domain import split_subject
from auditor.errors import Invalid, NotFound
from auditor.storage.unit_of_work import UnitOfWork


def now() -> datetime:
    return datetime.now(UTC)


def project_id(uow: UnitOfWork, project: str) -> int:
    """The id of project ``project``; ``NotFound`` ("no project 'x'") when there is none."""
    return uow.require_project(project).id


def parse_subject(text: str) -> SubjectSelector:
    """'project', 'every_rater', 'rater:ID' or 'model:ID' -> a selector."""
    found = split_subject(text, {kind.value for kind in SubjectKind})
    if found is None:
        raise Invalid(
            f"subject must be project, every_rater, rater:ID or model:ID, got {text!r}",
            field="subject",
        )
    return SubjectSelector(SubjectKind(found[0]), found[1])


def own_rule(uow: UnitOfWork, project: str, rule_id: str) -> str:
    """The full id of the project's rule ``rule_id`` (a full id or the name after
    '<project>:'); another project's rule is not found."""
    owner = project_id(uow, project)
    for candidate in (rule_id, f"{project}:{rule_id}"):
        found = uow.alerts.find_rule(candidate)
        if found is not None and found.project_id == owner:
            return candidate
    raise NotFound(f"project {project!r} has no rule {rule_id!r}")
