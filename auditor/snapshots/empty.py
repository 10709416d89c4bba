"""A window that holds no labels says so.

The stats explain an undefined measure from the labels they were given ("no pairable item",
"no repeated presentations"), which is true but misleading for a rolling window that is
empty because every label is older than the window (a file of last year's labels): the
reader looks for a pairing problem that does not exist. The window's own reason replaces
them, naming the window and, when the project has labels, the date of the latest one.
A project with no labels at all (its imports reverted) says "no labels" in every scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np

from auditor.domain import from_micros
from auditor.snapshots.scopes import Scope

NO_LABELS = "no labels"


def empty_window_reason(scope: Scope, latest: datetime | None) -> str:
    """``"no labels in the last 7 days (the latest is from 2024-03-14)"``."""
    days = 0 if scope.window is None else scope.window.days
    span = "day" if days == 1 else f"{days} days"
    reason = f"no labels in the last {span}"
    if latest is not None:
        reason += f" (the latest is from {latest.date().isoformat()})"
    return reason


def explain_empty_window(
    rendered: dict[str, Any], scope: Scope, window_order: np.ndarray, all_order: np.ndarray
) -> dict[str, Any]:
    """``rendered`` (a window's measure set) as it is unless the window holds no labels
    (``window_order``, the labeled_at of its labels, is empty); then a copy whose every
    undefined measure, at any depth, has the window's reason. ``all_order`` is the
    labeled_at (epoch microseconds) of every label of the project: when it is empty (every
    import reverted), every scope, the cumulative one too, says ``"no labels"``."""
    if all_order.shape[0] == 0:
        return _rewrite(rendered, NO_LABELS)
    if not scope.is_window or window_order.shape[0] > 0:
        return rendered
    latest = from_micros(int(all_order.max())) if all_order.shape[0] else None
    return _rewrite(rendered, empty_window_reason(scope, latest))


def _rewrite(node: Any, reason: str) -> Any:
    if isinstance(node, Mapping):
        copy = {key: _rewrite(value, reason) for key, value in node.items()}
        if "value" in copy and copy["value"] is None and "reason" in copy:
            copy["reason"] = reason
        return copy
    if isinstance(node, list):
        return [_rewrite(item, reason) for item in node]
    return node
