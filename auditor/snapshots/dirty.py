"""Dirty tracking: decide which scopes of a project need a new snapshot, from plain facts.

Storage supplies the facts (the last snapshot of each scope, the highest label id and the label
count now, whether labels lie in the ranges a window moved over); this module decides.

Rules
-----
- The cumulative scope is dirty when the highest label id passed its last watermark, or when
  the label count differs from the count it saw. The count catches a label whose transaction
  committed after a later one (ids are handed out at insert, not at commit), which a
  watermark alone would miss forever.
- A window is dirty when the project has new labels (as above: every scope is recomputed then),
  or when moving the window from its last position to now passed over labels: labeled_at in
  [previous start, new start) left it, labeled_at in (previous end, new end] entered it.
- A scope that was never computed is dirty when the project has labels at all.
- A project left with no labels (every import reverted) is dirty once more when its last
  snapshot still counted labels: the new snapshot reports every measure undefined ("no
  labels") instead of leaving the numbers of deleted labels as the latest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from auditor.snapshots.scopes import Scope, Window


@dataclass(frozen=True)
class LastSnapshot:
    """What dirty tracking needs of a scope's latest snapshot."""

    tick: int
    watermark: int
    n_labels: int
    window_start: datetime | None
    window_end: datetime | None


@dataclass(frozen=True)
class ProjectFacts:
    """The project's labels now: highest id (None when it has none) and count."""

    max_label_id: int | None
    label_count: int


def has_new_labels(last_cumulative: LastSnapshot | None, facts: ProjectFacts) -> bool:
    """True when labels arrived since the cumulative snapshot (or it never existed), or when
    labels left the project since (the count differs; zero when every one was deleted)."""
    if facts.max_label_id is None:
        return last_cumulative is not None and last_cumulative.n_labels != 0
    if last_cumulative is None:
        return True
    return (
        facts.max_label_id > last_cumulative.watermark
        or facts.label_count != last_cumulative.n_labels
    )


def moved_ranges(last: LastSnapshot, new: Window) -> list[tuple[datetime, datetime, bool, bool]]:
    """The labeled_at ranges a window passed over since ``last``.

    Returns a list of (low, high, low_inclusive, high_inclusive): labels in any of them
    changed the window's content. Empty for the cumulative scope.
    """
    if new.start is None or new.end is None or last.window_start is None:
        return []
    ranges: list[tuple[datetime, datetime, bool, bool]] = []
    if new.start > last.window_start:
        ranges.append((last.window_start, new.start, True, False))  # left the window
    if last.window_end is not None and new.end > last.window_end:
        ranges.append((last.window_end, new.end, False, True))  # entered it (late times)
    return ranges


def emptied(last: LastSnapshot | None) -> bool:
    """The scope's last snapshot counted labels (asked when the project has none left: that
    snapshot's numbers are of deleted labels)."""
    return last is not None and last.n_labels != 0


def scope_is_due(last: LastSnapshot | None, tick: int) -> bool:
    """A scope gets at most one snapshot per tick."""
    return last is None or last.tick < tick


@dataclass(frozen=True)
class ScopeDecision:
    scope: Scope
    dirty: bool
    reason: str


def decide(
    scope: Scope,
    last: LastSnapshot | None,
    tick: int,
    new_labels: bool,
    labels_moved: bool,
    facts: ProjectFacts,
) -> ScopeDecision:
    """Whether ``scope`` needs a snapshot at ``tick``, with the reason (for logs and tests)."""
    if facts.max_label_id is None and not emptied(last):
        return ScopeDecision(scope, False, "project has no labels")
    if not scope_is_due(last, tick):
        return ScopeDecision(scope, False, f"already has a snapshot for tick {tick}")
    if last is None:
        return ScopeDecision(scope, True, "never computed")
    if facts.max_label_id is None:
        return ScopeDecision(scope, True, "every label was deleted")
    if new_labels:
        return ScopeDecision(scope, True, "new labels")
    if scope.is_window and labels_moved:
        return ScopeDecision(scope, True, "window moved over labels")
    return ScopeDecision(scope, False, "unchanged")
