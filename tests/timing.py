"""Deadlines that give the same verdict on a quiet laptop and on a machine at load 10.

A test that checks a deadline (a scan interval, a heartbeat's staleness, "a snapshot within two
scan intervals") states it for a quiet machine and scales it with ``scaled``: the factor is
measured when the test asks, from a short busy loop, as

- the share of a core this process gets now (wall time over CPU time of the loop: 1 on an idle
  machine, about 5 when ten runnable processes share two cores), times
- how much slower this machine's core is than the reference one (the loop's CPU time over
  ``REFERENCE_CPU_SECONDS``; never below 1: a fast machine keeps the stated deadline).

So a deadline still fails when the code under test is slow for its own reasons, but not because
five other programs run beside the suite (issue 23: three deadline tests failed under load).
"""

from __future__ import annotations

import time

REFERENCE_CPU_SECONDS = 0.012  # the loop below on the CI machine's core, measured quiet
LOOP = 200_000
MOST = 20.0  # a machine 20 times slower than stated is broken, not busy


def _loop() -> int:
    total = 0
    for i in range(LOOP):
        total += i * i % 7
    return total


def slowness() -> float:
    """How many times longer than on a quiet reference machine things take right now."""
    wall, cpu = time.perf_counter(), time.process_time()
    _loop()
    wall, cpu = time.perf_counter() - wall, max(time.process_time() - cpu, 1e-6)
    share = max(1.0, wall / cpu)
    speed = max(1.0, cpu / REFERENCE_CPU_SECONDS)
    return min(MOST, share * speed)


_recent: tuple[float, float] | None = None  # (measured at, slowness)


def recent_slowness(max_age: float = 10.0) -> float:
    """``slowness`` measured at most ``max_age`` seconds ago: for the per-test timeout, where
    a fresh loop before each of 1,800 tests would cost more than it tells."""
    global _recent
    now = time.monotonic()
    if _recent is None or now - _recent[0] > max_age:
        _recent = (now, slowness())
    return _recent[1]


def scaled(seconds: float) -> float:
    """``seconds`` on a quiet reference machine, stretched by the measured ``slowness``."""
    return seconds * slowness()
