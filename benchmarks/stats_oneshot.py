"""`auditor stats` one-shot against its peer, whole process (issue 13, item 4).

Generates a 1M-label CSV (``ingest.generate``: 100k items x 10 raters, 4 categories), then
times, as subprocesses in the same run, ``auditor stats FILE --categories a,b,c,d`` (every
measure, with intervals) and ``peer_stats.py`` (pandas + krippendorff + statsmodels, two
measures), best of ``--repeat`` each, and prints the ratio. Target: at most 0.5x.

    .venv/bin/python benchmarks/stats_oneshot.py [--rows 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest import CATEGORIES, generate

HERE = Path(__file__).resolve().parent


def best_seconds(command: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="auditor-oneshot-") as directory:
        path = Path(directory) / "labels.csv"
        generate(path, options.rows, keys=False)
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
              f"{options.rows:,} labels")  # fmt: skip
        auditor = [sys.executable, "-c", "from auditor.cli import main; main()", "stats",
                   str(path), "--categories", ",".join(CATEGORIES)]  # fmt: skip
        peer = [sys.executable, str(HERE / "peer_stats.py"), str(path)]
        ours = best_seconds(auditor, options.repeat)
        theirs = best_seconds(peer, options.repeat)
        print(f"auditor stats (every measure): {ours:6.2f} s")
        print(f"pandas + krippendorff + statsmodels (two measures): {theirs:6.2f} s")
        print(f"ratio {ours / theirs:.2f}x [target <= 0.5x]")
        print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
