"""Scopes in time: the cumulative view and rolling windows by labeled_at, and the tick.

A *tick* numbers the recompute slots of a project: ``floor(epoch seconds / interval)``.
Snapshots are unique on (project, scope, tick), so two schedulers, a redelivered task or a
duplicated message that land in the same slot can write at most one snapshot.

Windows are measured against a clock passed in (``now``), never read here, so the demo can
run on simulated time and tests can pin the clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from auditor.domain import EPOCH, WINDOW, ProjectSettings, to_micros

CUMULATIVE = "cumulative"


@dataclass(frozen=True)
class Scope:
    """A named view of a project's labels: ``cumulative`` or a rolling window (``"7d"``)."""

    name: str
    window: timedelta | None = None

    @property
    def is_window(self) -> bool:
        return self.window is not None


@dataclass(frozen=True)
class Window:
    """The labeled_at range a scope covers at one clock time; both ends inclusive.

    ``start`` and ``end`` are None for the cumulative scope (every label, whatever its time).
    """

    start: datetime | None
    end: datetime | None

    def bounds_us(self) -> tuple[int | None, int | None]:
        """The ends as microseconds since the epoch, the unit of ``LabelArrays.order``."""
        return (
            None if self.start is None else to_micros(self.start),
            None if self.end is None else to_micros(self.end),
        )


def window_scope(days: int) -> Scope:
    if days <= 0:
        raise ValueError(f"a window must be at least one day, got {days}")
    return Scope(name=f"{days}d", window=timedelta(days=days))


def scopes_for(settings: ProjectSettings) -> tuple[Scope, ...]:
    """The cumulative scope first, then one rolling window per configured length."""
    windows = tuple(window_scope(d) for d in sorted(set(settings.windows_days)))
    return (Scope(CUMULATIVE), *windows)


def parse_scope(name: str) -> Scope:
    """``"cumulative"`` or ``"<days>d"``; anything else is a ValueError naming the input."""
    if name == CUMULATIVE:
        return Scope(CUMULATIVE)
    match = WINDOW.match(name)
    if match is None:
        raise ValueError(f"scope must be 'cumulative' or a window such as '7d', got {name!r}")
    return window_scope(int(match.group(1)))


def window_at(scope: Scope, now: datetime) -> Window:
    """The labeled_at range ``scope`` covers when measured at ``now`` (a UTC datetime)."""
    now = ensure_utc(now)
    if scope.window is None:
        return Window(None, None)
    return Window(now - scope.window, now)


def tick_for(now: datetime, interval_seconds: int) -> int:
    """The recompute slot that ``now`` falls in: floor(epoch seconds / interval)."""
    if interval_seconds <= 0:
        raise ValueError(f"recompute interval must be positive, got {interval_seconds}")
    return int(to_micros(ensure_utc(now)) // (interval_seconds * 1_000_000))


def tick_start(tick: int, interval_seconds: int) -> datetime:
    """The first instant of ``tick``."""
    return EPOCH + timedelta(seconds=tick * interval_seconds)


def ensure_utc(moment: datetime) -> datetime:
    """Aware datetimes are converted to UTC; a naive one is refused, since its zone is a guess."""
    if moment.tzinfo is None:
        raise ValueError(f"a time zone is required, got the naive datetime {moment.isoformat()}")
    return moment.astimezone(UTC)
