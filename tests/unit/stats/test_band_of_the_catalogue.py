"""A metric's band is spelled once, in the catalogue (issue 23, item 5): the statistics read
its scale from there by the metric's name."""

from __future__ import annotations

import pytest

from auditor.stats.bands import BandScale, band, scale_of
from auditor.stats.catalogue import KRIPPENDORFF, LANDIS_KOCH, METRICS


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.name)
def test_every_catalogue_band_is_a_scale_the_statistics_know(metric: object) -> None:
    name, spelled = metric.name, metric.band  # type: ignore[attr-defined]
    expected = {LANDIS_KOCH: BandScale.LANDIS_KOCH, KRIPPENDORFF: BandScale.KRIPPENDORFF}
    assert scale_of(name) == (None if spelled is None else expected[spelled])


def test_the_measures_band_follows_the_catalogue() -> None:
    # kappa-like on Landis-Koch, alpha on Krippendorff, a share on none
    assert band(0.7, scale_of("fleiss_kappa")) == "substantial"
    assert band(0.7, scale_of("krippendorff_alpha")) == "tentative"
    assert band(0.7, scale_of("observed_agreement")) is None


def test_an_unknown_metric_has_no_band_to_guess() -> None:
    with pytest.raises(KeyError):
        scale_of("kappa_of_the_future")
