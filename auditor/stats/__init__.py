"""auditor.stats: the measures of docs/measures.md in pure NumPy.

Public entry points: ``compute_measures`` (labels + settings -> ``MeasureSet``), the result
types, ``auditor.stats.export.measure_set_to_dict`` (the public JSON shape) and
``auditor.stats.synthetic`` (seeded synthetic projects).
"""

from auditor.stats.measures import DEFAULT_SEED, compute_measures
from auditor.stats.results import (
    PROJECT_MEASURES,
    CohenPair,
    Measure,
    MeasureSet,
    ModelResult,
    RaterResult,
)

__all__ = [
    "DEFAULT_SEED",
    "PROJECT_MEASURES",
    "CohenPair",
    "Measure",
    "MeasureSet",
    "ModelResult",
    "RaterResult",
    "compute_measures",
]
