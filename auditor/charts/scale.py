"""Axes that read at a glance: the value range fitted to what is drawn, round value ticks,
and time ticks that never overprint each other.

Why fit the range: agreement coefficients of a working project move within a few hundredths
(0.70-0.75); on a fixed 0-1 axis that is a flat line. The range covers the values and their
intervals, plus padding, and a reference line joins it only when the data still fill at
least a fifth of the plot height with it (otherwise the line is left out, and the legend
still names it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

PAD_SHARE = 0.08  # of the data's span, above and below
MIN_SPAN = 0.05  # a constant series gets this much room around it
MIN_DATA_SHARE = 0.2  # the data never fill less than a fifth of the plot height
_VALUE_STEPS = (0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0)
_DECIMALS = {0.005: 3, 0.01: 2, 0.02: 2, 0.025: 3, 0.05: 2, 0.1: 1, 0.2: 1, 0.25: 2, 0.5: 1, 1.0: 0}


def y_domain(
    values: Sequence[float],
    references: Sequence[float] = (),
    bounds: tuple[float, float] = (-1.0, 1.0),
) -> tuple[float, float, tuple[float, ...]]:
    """(low, high, references drawn) for ``values`` (points and interval ends).

    A reference value is included (widening the range) only while the data still span at
    least ``MIN_DATA_SHARE`` of the result; those left out are not drawn. ``bounds`` is
    the measure's possible range ([-1, 1] for coefficients, [0, 1] for shares): the padded
    range is shifted back inside it when the data are."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return 0.0, 1.0, tuple(r for r in references if 0.0 <= r <= 1.0)
    low, high = min(finite), max(finite)
    span = max(high - low, MIN_SPAN)
    shown: list[float] = []
    for reference in sorted(references, key=lambda r: abs(r - (low + high) / 2)):
        new_low, new_high = min(low, reference), max(high, reference)
        padded = max(new_high - new_low, MIN_SPAN) * (1 + 2 * PAD_SHARE)
        if span / padded >= MIN_DATA_SHARE:
            low, high = new_low, new_high
            shown.append(reference)
    middle, span = (low + high) / 2, max(high - low, MIN_SPAN)
    low, high = middle - span / 2, middle + span / 2
    pad = span * PAD_SHARE
    low, high = low - pad, high + pad
    # Stay within the measure's possible range when the data do: a padded 1.03 or -0.02
    # tick would suggest values the measure cannot take.
    floor, ceiling = bounds
    data_low, data_high = min(finite), max(finite)
    if data_high <= ceiling < high:
        low, high = low - (high - ceiling), ceiling
    if data_low >= floor > low:
        low, high = floor, min(high + (floor - low), max(ceiling, data_high))
    return low, high, tuple(sorted(shown))


def y_ticks(low: float, high: float, max_ticks: int = 6) -> tuple[list[float], int]:
    """Round tick values inside [low, high] (at most ``max_ticks``) and the decimals that
    tell them apart."""
    span = high - low
    step = next((s for s in _VALUE_STEPS if span / s <= max_ticks), _VALUE_STEPS[-1])
    first = math.ceil(low / step - 1e-9)
    ticks = []
    k = first
    while k * step <= high + 1e-9:
        ticks.append(round(k * step, 10))
        k += 1
    decimals = _DECIMALS[step]
    return ticks, decimals


# (step, label format): candidates from fine to coarse; the first whose labels fit is used.
_TIME_STEPS: tuple[tuple[timedelta, str], ...] = (
    (timedelta(hours=1), "%H:%M"),
    (timedelta(hours=2), "%H:%M"),
    (timedelta(hours=3), "%H:%M"),
    (timedelta(hours=6), "%m-%d %H:%M"),
    (timedelta(hours=12), "%m-%d %H:%M"),
    (timedelta(days=1), "%m-%d"),
    (timedelta(days=2), "%m-%d"),
    (timedelta(days=7), "%m-%d"),
    (timedelta(days=14), "%m-%d"),
    (timedelta(days=30), "%Y-%m-%d"),
    (timedelta(days=91), "%Y-%m"),
    (timedelta(days=365), "%Y"),
)
CHAR_WIDTH = 6.6  # px per character at font-size 11 (digits and dashes of a sans font)
_GAP = 14  # px between neighbouring labels


def label_width(text: str, font_size: float = 11) -> float:
    return len(text) * CHAR_WIDTH * font_size / 11


def time_ticks(t0: datetime, t1: datetime, width: float) -> list[tuple[datetime, str]]:
    """Ticks on round times (UTC midnight for day steps) between ``t0`` and ``t1`` drawn
    over ``width`` pixels, spaced so their labels cannot overlap. One tick for one instant."""
    if t1 <= t0:
        return [(t0, t0.astimezone(UTC).strftime("%Y-%m-%d %H:%M"))]
    seconds = (t1 - t0).total_seconds()
    for step, fmt in _TIME_STEPS:
        sample = label_width(t0.astimezone(UTC).strftime(fmt))
        if step.total_seconds() / seconds * width >= sample + _GAP:
            break
    else:
        step, fmt = _TIME_STEPS[-1]
    ticks = []
    moment = _round_up(t0.astimezone(UTC), step)
    while moment <= t1:
        ticks.append((moment, moment.strftime(fmt)))
        moment = _next(moment, step)
    if len(ticks) < 2:  # a span shorter than one step: its two ends
        fmt = "%m-%d %H:%M"
        ticks = [(t, t.astimezone(UTC).strftime(fmt)) for t in (t0, t1)]
    return ticks


def _round_up(moment: datetime, step: timedelta) -> datetime:
    if step >= timedelta(days=365):
        start = datetime(moment.year, 1, 1, tzinfo=UTC)
        return start if start >= moment else datetime(moment.year + 1, 1, 1, tzinfo=UTC)
    if step >= timedelta(days=28):
        start = datetime(moment.year, moment.month, 1, tzinfo=UTC)
        return start if start >= moment else _next(start, timedelta(days=31))
    if step >= timedelta(days=1):
        start = datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
        return start if start >= moment else start + timedelta(days=1)
    hours = int(step.total_seconds() // 3600)
    start = moment.replace(minute=0, second=0, microsecond=0)
    start -= timedelta(hours=start.hour % hours)
    return start if start >= moment else start + step


def _next(moment: datetime, step: timedelta) -> datetime:
    if step >= timedelta(days=365):
        return moment.replace(year=moment.year + 1)
    if step >= timedelta(days=91):
        month = moment.month + 3
        return moment.replace(year=moment.year + (month - 1) // 12, month=(month - 1) % 12 + 1)
    if step >= timedelta(days=28):
        month = moment.month + 1
        return moment.replace(year=moment.year + (month - 1) // 12, month=(month - 1) % 12 + 1)
    return moment + step
