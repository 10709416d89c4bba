"""The charts' axes: a value range fitted to the data (never flatter than a fifth of the
plot), reference lines only where they do not flatten it, time ticks that cannot overprint."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from auditor.charts import ChartPoint, ChartSeries, line_chart
from auditor.charts.scale import MIN_DATA_SHARE, MIN_SPAN, label_width, time_ticks, y_domain
from auditor.presentation.figures import has_thresholds, value_bounds

REFERENCES = (0.667, 0.8)
values = st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=1, max_size=50)


@given(values, st.sampled_from([(), REFERENCES]))
def test_range_holds_the_data_and_never_flattens_it(data: list[float], refs: tuple) -> None:
    low, high, shown = y_domain(data, refs)
    assert low <= min(data) and max(data) <= high
    assert low >= -1.0 - 1e-9 and high <= 1.0 + 1e-9  # within the coefficient's range
    assert max(max(data) - min(data), MIN_SPAN) / (high - low) >= MIN_DATA_SHARE - 1e-9
    assert all(low <= r <= high for r in shown) and set(shown) <= set(refs)


def test_range_fits_a_working_project_not_zero_to_one() -> None:
    low, high, shown = y_domain([0.70, 0.72, 0.75, 0.74], REFERENCES)
    assert 0.6 < low < 0.667 and 0.8 < high < 0.85 and shown == REFERENCES
    # far from the data, the lines would squeeze it into a sliver: they are left out
    low, high, shown = y_domain([0.30, 0.31, 0.32], REFERENCES)
    assert shown == () and high < 0.4
    # a share of 0 stays on its floor, with no negative tick room
    assert y_domain([0.0, 0.0], (), (0.0, 1.0))[0] == 0.0


@given(
    st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1), timezones=st.just(UTC)),
    st.integers(60, 3 * 365 * 86400),
    st.integers(120, 1400),
)
def test_time_ticks_do_not_overprint(t0: datetime, seconds: int, width: int) -> None:
    t1 = t0 + timedelta(seconds=seconds)
    ticks = time_ticks(t0, t1, width)
    assert len(ticks) >= 1
    assert all(t0 <= moment <= t1 for moment, _ in ticks)
    xs = [(moment - t0).total_seconds() / seconds * width for moment, _ in ticks]
    for k in range(len(ticks) - 1):
        a, b = ticks[k][1], ticks[k + 1][1]
        assert xs[k + 1] - xs[k] >= (label_width(a) + label_width(b)) / 2, (a, b)


def _chart(metric: str, points: list[ChartPoint]) -> str:
    from auditor.presentation.figures import thresholds_for

    thresholds = thresholds_for(metric) if has_thresholds(metric) else ()
    series = [ChartSeries("cumulative", "#000", points)]
    return line_chart(metric, series, thresholds=thresholds, bounds=value_bounds(metric))


def test_reference_lines_on_agreement_coefficients_only() -> None:
    t = datetime(2024, 1, 1, tzinfo=UTC)
    points = [ChartPoint(t + timedelta(days=i), 0.72 + 0.01 * i) for i in range(5)]
    # issue 27: in the card's vocabulary: Krippendorff's lines on alpha and rho, Landis-Koch's
    # band edges on the kappa-like coefficients
    for metric in ("rho", "krippendorff_alpha"):
        assert 'data-thresholds="0.667 0.8"' in _chart(metric, points), metric
    for metric in ("kappa_s", "fleiss_kappa", "s_vs_group"):
        svg = _chart(metric, points)
        assert "0.60 substantial" in svg and "0.667" not in svg, metric
    for share in ("self_agreement", "random_choice", "reliability", "observed_agreement"):
        svg = _chart(share, points)
        assert 'data-thresholds=""' in svg and "data-threshold=" not in svg, share
