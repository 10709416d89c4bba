"""The deadline scale of tests/timing.py grows with the load, so deadlines keep their verdict."""

from __future__ import annotations

import multiprocessing
import os
import time

from tests.timing import MOST, scaled, slowness


def _spin(until: float) -> None:
    while time.monotonic() < until:
        pass


def test_a_quiet_deadline_is_never_shortened() -> None:
    assert 1.0 <= slowness() <= MOST
    assert scaled(2.0) >= 2.0


def test_the_scale_grows_when_other_processes_take_the_cores() -> None:
    quiet = min(slowness() for _ in range(3))
    busy = 4 * (os.cpu_count() or 1)  # four runnable processes a core: a load of ~4x the cores
    until = time.monotonic() + 1.5
    spinners = [multiprocessing.Process(target=_spin, args=(until,)) for _ in range(busy)]
    for spinner in spinners:
        spinner.start()
    try:
        time.sleep(0.3)
        loaded = max(slowness() for _ in range(3))
    finally:
        for spinner in spinners:
            spinner.join(5)
    assert loaded > 1.5 * quiet, (quiet, loaded)
