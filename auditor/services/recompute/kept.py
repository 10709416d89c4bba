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
from auditor.storage.kept_repository import CUMULATIVE, KeptRecord, from_payload, to_payload
from auditor.storage.label_loader import LabelRange, dense_codes
from auditor.storage.unit_of_work import UnitOfWork

# Bumped whenever the kept arrays change meaning: a stored state of another version rebuilds.
VERSION = 13

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
    """What one update did. status: updated | rebuilt | unchanged. ``state``, ``layout`` and
    ``label_count``: the state it stored (updated and rebuilt), so a snapshot served from it
    does not read and decode it again (84 MB of payloads at 200 raters)."""

    status: str
    reason: str
    new_labels: int
    items: int
    watermark: int
    seconds: float
    state: kept.KeptStats | None = None
    layout: Layout | None = None
    label_count: int | None = None


@dataclass(frozen=True)
class Span:
    """What a kept state covers besides its label watermark: every label (``cumulative``) or,
    for a rolling window, the labels with start_us <= labeled_at <= end_us (epoch
    microseconds, the window's ends inclusive as ``snapshots.subset.window_mask`` takes them).

    A window's state moves with the clock: labels that left the window (labeled before the
    new start) and labels that entered it (labeled after the old end) change their items'
    contributions as new labels do, so an update reads the labels of that slice of time
    (index ``ix_labels_project_id_labeled_at``), not the window."""

    scope: str = CUMULATIVE
    start_us: int | None = None
    end_us: int | None = None

    @property
    def is_window(self) -> bool:
        return self.start_us is not None and self.end_us is not None

    def within(self) -> LabelRange:
        return LabelRange(self.start_us, self.end_us)

    def mask(self, labeled_at: np.ndarray) -> np.ndarray:
        if not self.is_window:
            return np.ones(labeled_at.shape, dtype=bool)
        assert self.start_us is not None and self.end_us is not None
        return (labeled_at >= self.start_us) & (labeled_at <= self.end_us)


EVERY_LABEL = Span()


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


def _read_all(uow: UnitOfWork, project_id: int, span: Span = EVERY_LABEL) -> dict[str, np.ndarray]:
    """Every label of the project (of the span) as id columns (the full load's reads)."""
    return uow.label_columns(project_id, span.within())


def build(
    uow: UnitOfWork, project_id: int, upto: int | None = None, span: Span = EVERY_LABEL
) -> tuple[kept.KeptStats, Layout, int, int]:
    """The state from every label of ``span`` (up to label id ``upto``): (state, layout,
    watermark, n). A window's watermark is ``upto`` (the labels it has seen, in the window
    or not)."""
    columns = _read_all(uow, project_id, span)
    if upto is not None:
        keep = columns["id"] <= upto
        columns = {name: values[keep] for name, values in columns.items()}
    with uow:
        layout = _layout_now(
            uow, project_id, sorted(int(r) for r in np.unique(columns["rater_id"]))
        )
    watermark = int(columns["id"].max()) if columns["id"].size else 0
    if span.is_window and upto is not None:
        watermark = upto
    count = int(columns["id"].size)
    return _contribution(columns, layout), layout, watermark, count


def rebuild_kept(
    uow: UnitOfWork,
    project_id: int,
    reason: str = "rebuild",
    span: Span = EVERY_LABEL,
    upto: int | None = None,
) -> KeptUpdate:
    """Build the project's kept state (of ``span``) from its labels and store it."""
    started = time.process_time()
    state, layout, watermark, count = build(uow, project_id, upto, span)
    save_whole(uow, project_id, state, layout, watermark, count, span)
    seconds = time.process_time() - started
    return KeptUpdate("rebuilt", reason, count, -1, watermark, seconds, state, layout, count)


def save_whole(
    uow: UnitOfWork,
    project_id: int,
    state: kept.KeptStats,
    layout: Layout,
    watermark: int,
    count: int,
    span: Span = EVERY_LABEL,
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
            scope=span.scope,
            start_us=span.start_us,
            end_us=span.end_us,
        )
        uow.commit()


def _why_rebuild(
    uow: UnitOfWork,
    project_id: int,
    record: KeptRecord | None,
    expected_count: int | None,
    span: Span = EVERY_LABEL,
) -> tuple[str | None, Layout | None]:
    if record is None:
        return "no kept state yet", None
    if span.is_window:
        assert span.start_us is not None and span.end_us is not None
        if record.start_us is None or record.end_us is None:
            return "no window range kept", None
        if span.end_us < record.end_us or span.start_us < record.start_us:
            return "the window moved back in time", None
        if span.start_us - record.start_us > span.end_us - span.start_us:
            return "the window moved by more than its length", None
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
    uow: UnitOfWork,
    project_id: int,
    *,
    expected_count: int | None = None,
    span: Span = EVERY_LABEL,
    upto: int | None = None,
) -> KeptUpdate:
    """Fold the labels since the kept watermark into the kept statistics of ``span`` (or
    rebuild them when an update cannot; see the module docstring). ``expected_count``: the
    project's label count as the caller saw it, checked against what the cumulative state
    will cover. ``upto``: the highest label id to fold in (a window follows the cumulative
    state's watermark, so both describe the same labels); None: every label there is."""
    started = time.process_time()
    with uow:
        record = uow.kept.load(project_id, span.scope)
        reason, layout = _why_rebuild(uow, project_id, record, expected_count, span)
        if reason is None and record is not None and layout is not None:
            arrived = uow.kept.count_after(project_id, record.watermark)
            if arrived > max(MIN_REBUILD_LABELS, record.label_count // REBUILD_SHARE):
                # a big import since: one columnar read beats row reads by item
                reason = f"{arrived} labels since the watermark: a rebuild reads them faster"
            else:
                new = uow.kept.labels_after(project_id, record.watermark, upto)
                moved = _moved(uow, project_id, record, span)
                count = record.label_count + int(new["id"].size)
                if expected_count is not None and count < expected_count:
                    reason = "label count does not add up (a label below the watermark)"
    if reason is not None or record is None or layout is None:
        return rebuild_kept(uow, project_id, reason or "rebuild", span, upto)
    top = int(new["id"].max()) if new["id"].size else record.watermark
    upto = max(top, record.watermark) if upto is None else max(upto, record.watermark)
    arriving = new["item_id"][span.mask(new["labeled_at"])]
    touched = np.unique(np.concatenate([arriving, moved]))
    if touched.size == 0:
        if upto == record.watermark and (record.start_us, record.end_us) == (
            span.start_us,
            span.end_us,
        ):
            return KeptUpdate("unchanged", "no new labels", 0, 0, record.watermark, 0.0)
        _save(uow, project_id, record, layout, None, [], upto, record.label_count, span)
        return KeptUpdate("unchanged", "no label in the span changed", 0, 0, upto, 0.0)
    with uow:
        columns = uow.kept.labels_of_items(project_id, touched, upto)
        inside = span.mask(columns["labeled_at"])
        added = sorted(
            set(int(r) for r in np.unique(columns["rater_id"][inside])) - set(layout.raters)
        )
        # Kept slots follow the rater ids, as the full computation numbers raters; a new rater
        # whose id sorts before a kept one (created earlier, first labels now) renumbers.
        renumbered = bool(added) and bool(layout.raters) and added[0] < layout.raters[-1]
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
        return rebuild_kept(
            uow, project_id, "categories or rater kinds changed meanwhile", span, upto
        )
    if renumbered:
        return rebuild_kept(
            uow, project_id, "a rater created before a kept one labeled", span, upto
        )
    old = (columns["id"] <= record.watermark) & _old_span(record).mask(columns["labeled_at"])
    before = _contribution({n: v[old] for n, v in columns.items()}, layout)
    after = _contribution({n: v[inside] for n, v in columns.items()}, layout)
    state = state.minus(before).plus(after)
    count = record.label_count - int(old.sum()) + int(inside.sum())
    changed = sorted(set(int(g) for g in kept.item_groups(touched, layout.groups)))
    if added:  # every group's arrays grew
        changed = list(range(layout.groups))
    _save(uow, project_id, record, layout, state, changed, upto, count, span)
    return KeptUpdate(
        "updated",
        "labels since the watermark" if not span.is_window else "labels and the window moved",
        int(new["id"].size),
        int(touched.size),
        upto,
        time.process_time() - started,
        state,
        layout,
        count,
    )


def _old_span(record: KeptRecord) -> Span:
    return Span("", record.start_us, record.end_us)


def _moved(uow: UnitOfWork, project_id: int, record: KeptRecord, span: Span) -> np.ndarray:
    """Item ids whose labels below the watermark left or entered a moving window: labeled
    in [old start, new start) or in (old end, new end]. Empty for the cumulative state."""
    if not span.is_window or record.start_us is None or record.end_us is None:
        return np.empty(0, dtype=np.int64)
    assert span.start_us is not None and span.end_us is not None
    left = uow.kept.labels_labeled_between(
        project_id, record.start_us, span.start_us, record.watermark
    )
    entered = uow.kept.labels_labeled_between(
        project_id, record.end_us + 1, span.end_us + 1, record.watermark
    )
    return np.concatenate([left["item_id"], entered["item_id"]]).astype(np.int64)


def _save(
    uow: UnitOfWork,
    project_id: int,
    record: KeptRecord,
    layout: Layout,
    state: kept.KeptStats | None,
    changed: list[int],
    watermark: int,
    count: int,
    span: Span,
) -> None:
    """Write the changed groups and the state row (the watermark and span move even when no
    group changed)."""
    with uow:
        uow.kept.save(
            project_id,
            watermark=watermark,
            label_count=count,
            groups=layout.groups,
            signature=layout.signature() if state is not None else record.signature,
            at=datetime.now(UTC),
            payloads={} if state is None else payloads(state, changed),
            scope=span.scope,
            start_us=span.start_us,
            end_us=span.end_us,
        )
        uow.commit()
