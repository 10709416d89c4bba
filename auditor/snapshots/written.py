"""What a recompute wrote: one value per snapshot inserted, handed to alert evaluation.

Its own module so the recompute and alert evaluation can both name it without importing each
other: the recompute calls the evaluation, never the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class WrittenSnapshot:
    """One snapshot as its recompute wrote it. ``carried``: metrics this snapshot repeats
    from an earlier one (a snapshot served from kept statistics carries what they do not
    cover from the last full pass): not evaluated again, or a sequential test would count one
    observation twice."""

    id: int
    scope: str
    tick: int
    n_labels: int
    rendered: dict[str, Any]
    carried: frozenset[str] = field(default_factory=frozenset)
    # The metric points written with it (rows of ``metric_points``): evaluation judges these,
    # not a read back of what this transaction just wrote.
    points: tuple[Mapping[str, Any], ...] = ()
