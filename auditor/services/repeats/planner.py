"""The repeat planner: which items to show a rater again, unknown to her (docs/repeats.md).

``plan_repeats`` answers ``{"rater", "items", "needed", "have", "outstanding"}`` and records
the items as planned; the same ``request_id`` gets the same answer again. A planned repeat is
fulfilled by the rater's next label on the item, whatever the route (``fulfil_repeats`` runs
inside every ingest transaction), and expires after the project's ``open_days``.
"""

from __future__ import annotations

import dataclasses
import zlib
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from auditor.domain import RepeatSettings, from_micros, to_micros
from auditor.errors import Invalid, NotFound
from auditor.stats import repeats as plan
from auditor.stats.selfagreement import pairs_agreeing
from auditor.storage import repeat_repository as repo
from auditor.storage.db import utc_now
from auditor.storage.unit_of_work import UnitOfWork

MAX_LIMIT = 1000
REQUEST_ID_MAX = 200


def _self_agreement(item: np.ndarray, category: np.ndarray) -> tuple[float | None, int]:
    """SA of one rater from her labels (docs/measures.md, "Version 2") and her repeated items."""
    if item.size == 0:
        return None, 0
    cells, counts = np.unique(np.column_stack([item, category]), axis=0, return_counts=True)
    items, back = np.unique(cells[:, 0], return_inverse=True)
    names, column = np.unique(cells[:, 1], return_inverse=True)
    table = np.zeros((items.shape[0], names.shape[0]), dtype=np.int64)
    table[back.reshape(-1), column.reshape(-1)] = counts
    repeated = table.sum(axis=1) >= 2
    if not repeated.any():
        return None, 0
    return float(pairs_agreeing(table[repeated]).mean()), int(repeated.sum())


def plan_repeats(
    uow: UnitOfWork,
    slug: str,
    rater: str,
    limit: int,
    *,
    request_id: str | None = None,
    now: datetime | None = None,
    since: datetime | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Propose up to ``limit`` items for ``rater`` to see again and record them as planned.

    ``limit=0`` only reports the counts (nothing is recorded). ``since``: only items the rater
    first labeled from then on (the demo keeps its repeats recent). ``seed``: the draw among
    equally good items (default: from the request id, else fresh)."""
    if not 0 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit must be in [0, {MAX_LIMIT}], got {limit}")
    if request_id is not None and not 0 < len(request_id) <= REQUEST_ID_MAX:
        raise Invalid(f"request_id must have 1 to {REQUEST_ID_MAX} characters")
    at = to_micros(now or utc_now())
    with uow:
        project = uow.require_project(slug)
        rater_id = uow.repeats.find_rater(project.id, rater)
        if rater_id is None:
            raise NotFound(f"no rater {rater!r} in project {slug!r}")
        if request_id is not None and limit > 0:
            stored = uow.repeats.find_request(project.id, rater_id, request_id)
            if stored is not None:
                return dict(stored)
        uow.repeats.lock_rater(rater_id)
        uow.repeats.expire(project.id, at)
        settings = project.repeat_settings
        item, category, labeled_at = uow.repeats.rater_labels(project.id, rater_id)
        # dense category indices for the stratification; ``category_ids`` maps them back
        category_ids, dense = np.unique(category, return_inverse=True)
        items = plan.rater_items(item, dense.reshape(-1), labeled_at)
        sa, have = _self_agreement(item, category)
        needed = plan.needed_repeats(sa, have, settings.half_width, project.settings.interval_level)
        waiting = uow.repeats.open_items(project.id, rater_id, at)
        room = plan.repeat_room(settings.share, items.item.shape[0], have, waiting.shape[0])
        picks: list[plan.Pick] = []
        if limit > 0 and room > 0:
            mask = plan.eligible(
                items,
                at,
                settings.min_gap_hours,
                settings.min_gap_items,
                waiting,
                None if since is None else to_micros(since),
            )
            open_categories = items.first_category[np.isin(items.item, waiting)]
            if seed is None and request_id is not None:
                seed = zlib.crc32(f"{project.id}:{rater_id}:{request_id}".encode())
            rng = np.random.default_rng(seed)
            picks = plan.choose(items, mask, min(limit, room), open_categories, rng)
        picks = [dataclasses.replace(p, category=int(category_ids[p.category])) for p in picks]
        answer = _answer(uow, project.id, rater, items, picks, needed, have, len(waiting))
        if limit > 0:
            _record(uow, project.id, rater_id, items, picks, settings, at, request_id)
            if request_id is not None:
                uow.repeats.store_request(project.id, rater_id, request_id, at, answer)
        uow.commit()
    return answer


def _answer(
    uow: UnitOfWork,
    project_id: int,
    rater: str,
    items: plan.RaterItems,
    picks: list[plan.Pick],
    needed: int,
    have: int,
    waiting: int,
) -> dict[str, Any]:
    names = uow.repeats.item_names(p.item for p in picks)
    categories = {c.id: c.name for c in uow.projects.categories(project_id)}
    position = {int(i): k for k, i in enumerate(items.item)}
    listed = []
    for pick in picks:
        k = position[pick.item]
        reason = f"first labeled {categories.get(pick.category, '?')!r}"
        if pick.repeated_before:
            reason += f"; seen {int(items.looks[k])} times, no unrepeated item is eligible"
        listed.append(
            {
                "item": names[pick.item],
                "first_labeled_at": from_micros(int(items.first_at[k])).isoformat(),
                "reason": reason,
            }
        )
    return {
        "rater": rater,
        "items": listed,
        "needed": needed,
        "have": have,
        "outstanding": waiting + len(picks),
    }


def _record(
    uow: UnitOfWork,
    project_id: int,
    rater_id: int,
    items: plan.RaterItems,
    picks: list[plan.Pick],
    settings: RepeatSettings,
    at: int,
    request_id: str | None,
) -> None:
    position = {int(i): k for k, i in enumerate(items.item)}
    expires = at + round(timedelta(days=settings.open_days) / timedelta(microseconds=1))
    uow.repeats.insert_planned(
        [
            {
                "project_id": project_id,
                "rater_id": rater_id,
                "item_id": pick.item,
                "first_labeled_at": int(items.first_at[position[pick.item]]),
                "planned_at": at,
                "expires_at": expires,
                "reason": "repeated before" if pick.repeated_before else "stratified",
                "request_id": request_id,
                "status": "open",
            }
            for pick in picks
        ],
    )


@dataclasses.dataclass(frozen=True)
class RaterCoverage:
    rater: str
    planned: int
    fulfilled: int
    expired: int
    outstanding: int
    have: int
    needed: int
    self_agreement: float | None


def repeat_status(uow: UnitOfWork, slug: str, now: datetime | None = None) -> list[RaterCoverage]:
    """Per rater with labels or planned repeats: repeats planned, fulfilled, expired, open;
    repeated items she has and needs (from her current self-agreement). A rater whose labels
    were all reverted is still listed while she has planned repeats (open again, likely)."""
    at = to_micros(now or utc_now())
    with uow:
        project = uow.require_project(slug)
        facts = uow.repeats.self_agreement_by_rater(project.id)
        counts = uow.repeats.coverage(project.id, at)
        names = uow.repeats.rater_names(project.id)
        settings = project.repeat_settings
        level = project.settings.interval_level
    out = []
    for rater_id in sorted(facts.keys() | counts.keys(), key=lambda r: names[r]):
        fact = facts.get(rater_id, repo.RaterFacts(0, 0, None))
        c = counts.get(rater_id, repo.Coverage())
        needed = plan.needed_repeats(
            fact.self_agreement, fact.n_repeated, settings.half_width, level
        )
        out.append(
            RaterCoverage(
                names[rater_id],
                c.planned,
                c.fulfilled,
                c.expired,
                c.open,
                fact.n_repeated,
                needed,
                fact.self_agreement,
            )
        )
    return out


def update_repeat_settings(uow: UnitOfWork, slug: str, **fields: Any) -> RepeatSettings:
    """Change the named repeat settings of project ``slug``; a bad value raises ``Invalid``
    naming it, and nothing changes."""
    known = tuple(f.name for f in dataclasses.fields(RepeatSettings))
    for name in fields:
        if name not in known:
            raise Invalid(f"unknown repeat setting {name!r} (settings: {', '.join(known)})")
    with uow:
        project = uow.require_project(slug, for_update=True)
        try:
            settings = dataclasses.replace(project.repeat_settings, **fields)
        except (TypeError, ValueError) as error:
            raise Invalid(f"repeat settings: {error}") from None
        uow.projects.save_repeat_settings(project.id, settings)
        uow.commit()
    return settings
