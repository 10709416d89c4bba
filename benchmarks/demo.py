"""Benchmark of ``auditor demo``: its wall time, the README's "takes 5-20 s".

The demo's behaviour (r07 fires and resolves, on the simulated clock) is tested in
tests/integration/alerts/test_demo_alerts.py; how long it takes depends on the machine and
its load, so it is measured here, not asserted in the suite.

Run:  .venv/bin/python benchmarks/demo.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENDS_AT = "2024-03-28T00:00Z"  # the test's end: deterministic, like --seed


def one_run(directory: Path, run: int) -> float:
    """Seconds for one ``auditor demo`` in a fresh process on a new SQLite file."""
    command = [
        sys.executable,
        "-c",
        "from auditor.cli import main; main()",
        "demo",
        "--database",
        f"sqlite:///{directory / f'demo-{run}.db'}",
        "--ends-at",
        ENDS_AT,
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"auditor demo failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as directory:
        seconds = [one_run(Path(directory), run) for run in range(runs)]
    load = os.getloadavg()[0]
    print(
        f"auditor demo: median {statistics.median(seconds):.1f} s, "
        f"max {max(seconds):.1f} s over {runs} runs (load average {load:.1f})"
    )


if __name__ == "__main__":
    main()
