"""Interpretation bands (docs/measures.md, "Interpretation bands").

Landis and Koch (1977) for the kappa family; Krippendorff (2004) for alpha and rho, whose
acceptance advice (0.667 / 0.800) is about reliability of data rather than a verbal scale.
"""

from __future__ import annotations

from enum import StrEnum

from auditor.stats.catalogue import BY_NAME, KRIPPENDORFF, LANDIS_KOCH


class BandScale(StrEnum):
    LANDIS_KOCH = "landis_koch"
    KRIPPENDORFF = "krippendorff"


def landis_koch(value: float) -> str:
    """Landis-Koch label: < 0 poor, .00-.20 slight, .21-.40 fair, .41-.60 moderate,
    .61-.80 substantial, .81-1 almost perfect (upper bounds inclusive)."""
    if value < 0:
        return "poor"
    for upper, label in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if value <= upper:
            return label
    return "almost perfect"


def krippendorff(value: float) -> str:
    """Krippendorff label: < .667 unacceptable, .667-.800 tentative, >= .800 acceptable."""
    if value < 0.667:
        return "unacceptable"
    if value < 0.800:
        return "tentative"
    return "acceptable"


_SCALES = {LANDIS_KOCH: BandScale.LANDIS_KOCH, KRIPPENDORFF: BandScale.KRIPPENDORFF}


def scale_of(metric: str) -> BandScale | None:
    """The band scale of ``metric``: the one its catalogue entry names (the only place a
    metric's band is spelled), None for a metric without one."""
    return _SCALES.get(BY_NAME[metric].band or "")


def band(value: float | None, scale: BandScale | None) -> str | None:
    """The label of ``value`` on ``scale``; None when there is no value or no scale applies."""
    if value is None or scale is None:
        return None
    if scale == BandScale.LANDIS_KOCH:
        return landis_koch(value)
    return krippendorff(value)
