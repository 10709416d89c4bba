"""The Label Studio point of the cumulative snapshot: webhook calls refused since the last sync.

Label Studio sends each event once, so a refused call (a wrong key, an event that does not
fit) is a change lost until a sync. The count is a project point, ``label_studio_rejected``,
so history, /metrics and the default rule ``default:label_studio_rejected`` see it; a project
whose count changed is dirty (the scan recomputes it, so the rule fires without waiting for
new labels), and a sync brings it back to 0.
"""

from __future__ import annotations

from typing import Any

from auditor.snapshots.points import ComputedPoint
from auditor.storage.unit_of_work import UnitOfWork

METRIC = "label_studio_rejected"


def rejection_points(uow: UnitOfWork, project_id: int) -> list[dict[str, Any]]:
    """The point row, for a project that uses Label Studio (settings, or a refused call)."""
    records = uow.label_studio_settings.rejections(project_id)
    if not records and uow.label_studio_settings.get(project_id) is None:
        return []
    count = sum(r.since_sync for r in records)
    uow.label_studio_settings.shown(project_id)
    # n = 1: a count is known exactly, never "insufficient data"
    return [ComputedPoint(METRIC, "project", "", float(count), None, None, 1, None).as_row()]
