"""TEMPORARY STUB (lead's branch; replaced by the kept branch's module)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.domain import ProjectSettings
from auditor.stats.kept import KeptStats
from auditor.stats.results import MeasureSet


@dataclass(frozen=True)
class KeptMeasureSet:
    measures: MeasureSet
    missing: tuple[str, ...]


def kept_measure_set(
    state: KeptStats,
    *,
    rater_names: tuple[str, ...],
    is_model: np.ndarray,
    categories: tuple[str, ...],
    settings: ProjectSettings,
    n_labels: int,
    n_items: int = 0,
) -> KeptMeasureSet:
    raise NotImplementedError
