"""Keep a project's statistics up to date from the labels since their watermark (issue 22).

``update_kept`` reads the labels after the kept watermark (an indexed range read), the items
they touch, and every label of those items (an indexed read by item); it subtracts the
items' old contribution (their labels up to the watermark) and adds the new one (their labels
up to the new watermark). Its cost follows the new labels and the items they touch, not the
project's size. What it cannot see incrementally is rebuilt from every label:

* no kept state yet, or a different signature (collapse policy, categories, number of
  groups, a rater's kind, the statistics' version);
* an import reverted after the state was updated (labels left the project);
* a label count that does not add up (a label committed below the watermark after it was
  taken, or deleted): ``expected_count`` from the caller's facts.

``rebuild_kept`` builds the state from every label; ``kept_verify.verify_kept`` brings the
kept state up to date, rebuilds at the same watermark and reports the largest difference
(``auditor recompute PROJECT --rebuild``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from auditor.domain import CollapsePolicy, LabelArrays, RaterKind
from auditor.errors import NotFound
from auditor.stats import kept
from auditor.storage.kept_repository import KeptRecord, from_payload, to_payload
from auditor.storage.label_loader import (
    dense_codes,
    fetch_columns_adbc,
    fetch_columns_sqlite,
    postgres_adbc_uri,
)
from auditor.storage.unit_of_work import UnitOfWork

# Bumped whenever the kept arrays change meaning: a stored state of another version rebuilds.
VERSION = 12

# The payload slot (a group index no group has) of the ungrouped tables: the rater triples'
# and pairs' sparse totals (stats/kept_triples, stats/kept_pairs).
TABLES_SLOT = -1

# More new labels than this, and more than 1 / REBUILD_SHARE of those already kept: the update
# rebuilds instead (a columnar read of every label costs less than reading that many by row
# and by item).
MIN_REBUILD_LABELS = 200_000
REBUILD_SHARE = 4


@dataclass(frozen=True)
class KeptUpdate:
    """What one update did. status: updated | rebuilt | unchanged."""

    status: str
    reason: str
    new_labels: int
    items: int
    watermark: int
    seconds: float


@dataclass(frozen=True)
class Layout:
    """What the sums depend on besides the labels: the kept rater numbering and the rest."""

    collapse: str
    categories: list[int]
    groups: int
    raters: list[int]  # rater id of each kept slot
    models: list[int]  # rater ids of kind model among them

    def signature(self) -> str:
        return json.dumps(
            {
                "version": VERSION,
                "collapse": self.collapse,
                "categories": self.categories,
                "groups": self.groups,
                "raters": self.raters,
                "models": self.models,
            }
        )

    @staticmethod
    def parse(text: str) -> Layout | None:
        data = json.loads(text)
        if data.get("version") != VERSION:
            return None
        return Layout(
            data["collapse"], data["categories"], data["groups"], data["raters"], data["models"]
        )


def _arrays(
    columns: dict[str, np.ndarray], layout: Layout
) -> tuple[LabelArrays, np.ndarray, np.ndarray]:
    """Label arrays of ``columns`` (every label of the items they hold), the group of each
    item and the kept slot of each rater. ``columns`` is emptied as it is consumed, so each
    raw column is freed once its codes exist (80 MB a column at 10M labels)."""
    label_ids = columns.pop("id")
    if label_ids.size > 1 and not bool(np.all(label_ids[1:] > label_ids[:-1])):
        # ties of labeled_at go to the lower label id, as in the full load (rows in id order)
        permutation = np.argsort(label_ids, kind="stable")
        for name in list(columns):
            columns[name] = columns[name][permutation]
        del permutation
    del label_ids
    item_codes, item_ids = dense_codes(columns.pop("item_id"))
    rater_codes, rater_ids = dense_codes(columns.pop("rater_id"))
    slot_of = {r: s for s, r in enumerate(layout.raters)}
    slots = np.array([slot_of[int(r)] for r in rater_ids], dtype=np.int64)
    models = set(layout.models)
    category_ids = np.asarray(layout.categories, dtype=np.int64)
    by_id = np.argsort(category_ids)
    position = by_id[np.searchsorted(category_ids[by_id], columns.pop("category_id"))]
    labels = LabelArrays(
        item=item_codes,
        rater=rater_codes,
        category=position.astype(np.int64, copy=False),
        order=columns.pop("labeled_at"),
        rater_is_model=np.array([int(r) in models for r in rater_ids], dtype=bool),
        category_names=tuple(str(c) for c in layout.categories),
    )
    return labels, kept.item_groups(item_ids, layout.groups), slots


def _contribution(columns: dict[str, np.ndarray], layout: Layout) -> kept.KeptStats:
    """The kept sums of ``columns`` (consumed: see ``_arrays``)."""
    groups, k = layout.groups, len(layout.categories)
    if columns["id"].size == 0:
        return kept.empty(groups, len(layout.raters), k)
    labels, group_of_item, slots = _arrays(columns, layout)
    return kept.contributions(
        labels, CollapsePolicy(layout.collapse), group_of_item, groups, slots, len(layout.raters)
    )


def state_of(record: KeptRecord, layout: Layout) -> kept.KeptStats:
    parts = []
    for g in range(layout.groups):
        payload = record.payloads.get(g)
        if payload is None:
            parts.append(kept.empty(1, len(layout.raters), len(layout.categories)))
        else:
            none = kept.no_tables(len(layout.categories))
            parts.append(kept.KeptStats(**from_payload(payload), **none))
    state = kept.KeptStats.stack(parts)
    stored = record.payloads.get(TABLES_SLOT)
    if stored is None:
        return state
    return state.with_ungrouped(**from_payload(stored))


def payloads(state: kept.KeptStats, groups: list[int], tables: bool = True) -> dict[int, bytes]:
    """The payloads of ``groups`` and (``tables``) of the ungrouped tables."""
    out = {g: to_payload(state.group(g).per_group()) for g in groups}
    if tables:
        out[TABLES_SLOT] = to_payload(state.ungrouped())
    return out


def _layout_now(uow: UnitOfWork, project_id: int, raters: list[int]) -> Layout:
    project = uow.projects.by_id(project_id)
    if project is None:
        raise NotFound(f"no project with id {project_id}")
    kinds = uow.kept.raters(project_id)
    return Layout(
        project.settings.collapse.value,
        uow.kept.category_ids(project_id),
        kept.DEFAULT_GROUPS,
        raters,
        sorted(r for r in raters if kinds.get(r) == RaterKind.MODEL.value),
    )


def _read_all(uow: UnitOfWork, project_id: int) -> dict[str, np.ndarray]:
    """Every label of the project as id columns (the full load's reads)."""
    engine = uow.root_engine
    if engine.dialect.name == "postgresql":
        return fetch_columns_adbc(postgres_adbc_uri(engine), project_id)
    with engine.connect() as connection:
        return fetch_columns_sqlite(connection, project_id)


def build(
    uow: UnitOfWork, project_id: int, upto: int | None = None
) -> tuple[kept.KeptStats, Layout, int, int]:
    """The state from every label (up to label id ``upto``): (state, layout, watermark, n)."""
    columns = _read_all(uow, project_id)
    if upto is not None:
        keep = columns["id"] <= upto
        columns = {name: values[keep] for name, values in columns.items()}
    with uow:
        layout = _layout_now(
            uow, project_id, sorted(int(r) for r in np.unique(columns["rater_id"]))
        )
    watermark = int(columns["id"].max()) if columns["id"].size else 0
    count = int(columns["id"].size)
    return _contribution(columns, layout), layout, watermark, count


def rebuild_kept(uow: UnitOfWork, project_id: int, reason: str = "rebuild") -> KeptUpdate:
    """Build the project's kept state from every label and store it."""
    started = time.process_time()
    state, layout, watermark, count = build(uow, project_id)
    save_whole(uow, project_id, state, layout, watermark, count)
    return KeptUpdate("rebuilt", reason, count, -1, watermark, time.process_time() - started)


def save_whole(
    uow: UnitOfWork,
    project_id: int,
    state: kept.KeptStats,
    layout: Layout,
    watermark: int,
    count: int,
) -> None:
    """Replace the project's whole kept state (every group) in a transaction of its own."""
    with uow:
        uow.kept.save(
            project_id,
            watermark=watermark,
            label_count=count,
            groups=layout.groups,
            signature=layout.signature(),
            at=datetime.now(UTC),
            payloads=payloads(state, list(range(layout.groups))),
            replace_all=True,
        )
        uow.commit()


def _why_rebuild(
    uow: UnitOfWork, project_id: int, record: KeptRecord | None, expected_count: int | None
) -> tuple[str | None, Layout | None]:
    if record is None:
        return "no kept state yet", None
    layout = Layout.parse(record.signature)
    if layout is None:
        return "kept by another version of the statistics", None
    now = _layout_now(uow, project_id, layout.raters)
    if (now.collapse, now.categories, now.models) != (
        layout.collapse,
        layout.categories,
        layout.models,
    ):
        return "settings, categories or rater kinds changed", None
    reverted = uow.imports.last_revert_at(project_id)
    if reverted is not None and reverted >= record.updated_at:
        return "an import was reverted", None
    if expected_count is not None and expected_count < record.label_count:
        return "labels were deleted", None
    return None, layout


def update_kept(
    uow: UnitOfWork, project_id: int, *, expected_count: int | None = None
) -> KeptUpdate:
    """Fold the labels since the kept watermark into the kept statistics (or rebuild them
    when an update cannot; see the module docstring). ``expected_count``: the project's label
    count as the caller saw it, checked against what the state will cover."""
    started = time.process_time()
    with uow:
        record = uow.kept.load(project_id)
        reason, layout = _why_rebuild(uow, project_id, record, expected_count)
        if reason is None and record is not None and layout is not None:
            arrived = uow.kept.count_after(project_id, record.watermark)
            if arrived > max(MIN_REBUILD_LABELS, record.label_count // REBUILD_SHARE):
                # a big import since: one columnar read beats row reads by item
                reason = f"{arrived} labels since the watermark: a rebuild reads them faster"
            else:
                new = uow.kept.labels_after(project_id, record.watermark)
                count = record.label_count + int(new["id"].size)
                if expected_count is not None and count < expected_count:
                    reason = "label count does not add up (a label below the watermark)"
    if reason is not None or record is None or layout is None:
        return rebuild_kept(uow, project_id, reason or "rebuild")
    if new["id"].size == 0:
        return KeptUpdate("unchanged", "no new labels", 0, 0, record.watermark, 0.0)
    upto = int(new["id"].max())
    touched = np.unique(new["item_id"])
    with uow:
        columns = uow.kept.labels_of_items(project_id, touched, upto)
        added = sorted(set(int(r) for r in np.unique(columns["rater_id"])) - set(layout.raters))
        now = _layout_now(uow, project_id, layout.raters + added)
        kept_models = [m for m in now.models if m in set(layout.raters)]
        if (now.collapse, now.categories, kept_models) != (
            layout.collapse,
            layout.categories,
            layout.models,
        ):
            # a category (or a kept rater's kind) changed after the check above, in a commit
            # that landed between the two reads: the sums' shapes no longer match
            changed_since = True
        else:
            changed_since = False
            layout = now
            state = state_of(record, layout).widened(len(layout.raters))
    if changed_since:
        return rebuild_kept(uow, project_id, "categories or rater kinds changed meanwhile")
    with uow:
        old = columns["id"] <= record.watermark
        before = _contribution({n: v[old] for n, v in columns.items()}, layout)
        after = _contribution(columns, layout)
        state = state.minus(before).plus(after)
        changed = sorted(set(int(g) for g in kept.item_groups(touched, layout.groups)))
        if added:  # every group's arrays grew
            changed = list(range(layout.groups))
        uow.kept.save(
            project_id,
            watermark=upto,
            label_count=count,
            groups=layout.groups,
            signature=layout.signature(),
            at=datetime.now(UTC),
            payloads=payloads(state, changed),
        )
        uow.commit()
    return KeptUpdate(
        "updated",
        "labels since the watermark",
        int(new["id"].size),
        int(touched.size),
        upto,
        time.process_time() - started,
    )
