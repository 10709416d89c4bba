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


def test_the_scale_grows_when_other_processes_take_the_core() -> None:
    """On one core shared with eight spinning processes, this process gets at most a ninth of
    it: the measured slowness grows severalfold, whatever else the machine runs."""
    cores = os.sched_getaffinity(0)
    core = min(cores)
    os.sched_setaffinity(0, {core})  # the spinners inherit it
    try:
        quiet = min(slowness() for _ in range(3))
        until = time.monotonic() + 2.0
        spinners = [multiprocessing.Process(target=_spin, args=(until,)) for _ in range(8)]
        for spinner in spinners:
            spinner.start()
        try:
            time.sleep(0.3)
            loaded = max(slowness() for _ in range(3))
        finally:
            for spinner in spinners:
                spinner.join(5)
    finally:
        os.sched_setaffinity(0, cores)
    assert loaded > 2 * quiet or loaded == MOST, (quiet, loaded)
