"""Hidden repeats through Label Studio: the planner's items shown again as new tasks.

Label Studio's labeling stream never gives a user a task she has annotated, and reopening one
shows her earlier answer, so a hidden repeat has to be a new task. For each item the planner
picks, this copies the data of a task of that item (read through the API) into a new task of
the same project. The item field (``data.<key>``, a project setting) carries the item, so the
webhook maps the new task's annotations to the original item, and her answer fulfils the plan.

The Community edition has no per-annotator queue: the new task is shown to every annotator
who has not annotated it, so it is a hidden repeat for everyone who labeled the item before.
Those raters get a planned repeat of the item too (when they have none open), so their second
look is counted as planned and fulfilled. Where task assignment exists (the Enterprise
edition), ``assign`` puts the task in the planned rater's queue (rater ids are Label Studio
user ids).

With a ``request_id``, a retry creates no task twice: the task made for each (request, item)
is remembered (``repeat:<request id>:<item>`` among what the integration remembers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from auditor.connectors.label_studio import LabelStudioApi
from auditor.domain import to_micros
from auditor.errors import Invalid
from auditor.services.label_studio.settings import api_of
from auditor.services.repeats.planner import plan_repeats
from auditor.storage.db import utc_now
from auditor.storage.label_studio_repository import SeenRecord
from auditor.storage.label_studio_settings_repository import SettingsRecord
from auditor.storage.unit_of_work import UnitOfWork

REPEAT_PREFIX = "repeat:"  # the remembered task of a (request, item)


@dataclass
class RepeatTasks:
    """The planner's answer, and the Label Studio task made for each item."""

    plan: dict[str, Any]
    tasks: dict[str, int] = field(default_factory=dict)  # item -> new task id
    also_planned: dict[str, list[str]] = field(default_factory=dict)  # item -> other raters
    assigned: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # items without a task, and why


def _checked(slug: str, record: SettingsRecord | None) -> tuple[LabelStudioApi, int, str]:
    api = api_of(record)
    if api is None or record is None or record.ls_project is None:
        raise Invalid(
            f"project {slug!r}: set its Label Studio url, token and project first "
            f"(`auditor label-studio settings {slug} --url ... --token ... --ls-project N`)"
        )
    if record.item_field is None:
        raise Invalid(
            f"project {slug!r} takes the item from the task id: a new task would be a new "
            "item. Put the item in the task data and set it as the item field "
            f"(`auditor label-studio settings {slug} --item-field data.<key>`, then "
            f"`auditor label-studio sync {slug}`)",
            field="item_field",
        )
    return api, record.ls_project, record.item_field.removeprefix("data.")


def plan_label_studio_repeats(
    uow: UnitOfWork,
    slug: str,
    rater: str,
    limit: int,
    *,
    request_id: str | None = None,
    assign: bool = False,
) -> RepeatTasks:
    """Plan up to ``limit`` repeats for ``rater`` and create a Label Studio task for each."""
    with uow.reader() as reader:
        project = reader.require_project(slug)
        record = reader.label_studio_settings.get(project.id)
    api, ls_project, key = _checked(slug, record)
    plan = plan_repeats(uow, slug, rater, limit, request_id=request_id)
    result = RepeatTasks(plan)
    for entry in plan["items"]:
        item = str(entry["item"])
        try:
            _one(uow, slug, api, ls_project, key, rater, item, request_id, assign, result)
        except Exception as error:  # one item's failure must not hide the others' tasks
            result.problems.append(f"{item}: {error}")
    return result


def _one(
    uow: UnitOfWork,
    slug: str,
    api: LabelStudioApi,
    ls_project: int,
    key: str,
    rater: str,
    item: str,
    request_id: str | None,
    assign: bool,
    result: RepeatTasks,
) -> None:
    made = f"{REPEAT_PREFIX}{request_id}:{item}" if request_id is not None else None
    with uow.reader() as reader:
        project = reader.require_project(slug)
        remembered = reader.label_studio.find(project.id, [made]) if made else {}
        task_id = reader.label_studio.task_of_item(project.id, item)
    if made in remembered and remembered[made].task_id is not None:  # a retry
        result.tasks[item] = int(remembered[made].task_id)  # type: ignore[arg-type]
        return
    if task_id is None:
        result.problems.append(f"{item}: no Label Studio task of it is known (run the sync)")
        return
    data = dict(api.task(task_id).get("data") or {})
    data[key] = item  # the original's item, whatever its data held
    created = api.create_task(ls_project, data)
    new_task = int(created["id"])
    result.tasks[item] = new_task
    if assign and rater.isdigit():
        api.assign(ls_project, new_task, int(rater))
        result.assigned.append(item)
    with uow:
        project = uow.require_project(slug)
        if made is not None:
            uow.label_studio.remember(project.id, {made: SeenRecord(0, False, str(new_task))})
        others = _plan_for_lookers(uow, project.id, item, rater, new_task)
        uow.commit()
    if others:
        result.also_planned[item] = others


def _plan_for_lookers(
    uow: UnitOfWork, project_id: int, item: str, rater: str, task: int
) -> list[str]:
    """Plan a repeat of ``item`` for every other rater who labeled it (the new task is shown
    to everyone in the Community edition)."""
    rater_id = uow.repeats.find_rater(project_id, rater)
    if rater_id is None:
        return []
    settings, _ = uow.repeats.project_repeat_settings(project_id)
    now = to_micros(utc_now())
    expires = now + round(timedelta(days=settings.open_days) / timedelta(microseconds=1))
    others = uow.repeats.other_lookers(project_id, item, rater_id)
    uow.repeats.insert_planned(
        [
            {
                "project_id": project_id,
                "rater_id": other,
                "item_id": item_id,
                "first_labeled_at": first,
                "planned_at": now,
                "expires_at": expires,
                "reason": f"shown again in Label Studio (task {task})",
                "request_id": None,
                "status": "open",
            }
            for other, item_id, first in others
        ]
    )
    names = uow.repeats.rater_names(project_id)
    return [names[other] for other, _, _ in others]
