"""What a recompute wrote: one value per snapshot inserted, handed to alert evaluation.

Its own module so the recompute and alert evaluation can both name it without importing each
other: the recompute calls the evaluation, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WrittenSnapshot:
    id: int
    scope: str
    tick: int
    n_labels: int
    rendered: dict[str, Any]
