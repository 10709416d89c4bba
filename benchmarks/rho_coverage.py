"""Coverage of rho's interval by simulation (issue 24 item 5).

    .venv/bin/python benchmarks/rho_coverage.py                 # 40 projects per cell
    .venv/bin/python benchmarks/rho_coverage.py --projects 100 --methods jackknife,bootstrap

Projects are drawn from the section 8 rater model (docs/measures.md, "Version 2"): K = 3
categories with shares .6/.3/.1, every rater labels every item, two looks on 20% of the
(item, rater) cells, raters with known x (0, .1, .3, .6 and, in the cells "with a random
rater", one more with x = 1). The truth is the mean over rater pairs of (1 - x_i)(1 - x_j).
For every cell (items 300 or 3000, with or without the random rater), interval method and rho
form, the script prints the share of projects whose interval covers the truth, the mean
half-width, the spread of the estimates across projects and the mean bias, with the load
average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from auditor.domain import IntervalMethod, ProjectSettings, RhoMode
from auditor.stats import compute_measures

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.unit.stats.helpers import rater_model_project, true_rho

SKEWED = (0.6, 0.3, 0.1)
GRADED = (0.0, 0.1, 0.3, 0.6)
WITH_RANDOM = (*GRADED, 1.0)


def cell(
    n_items: int,
    x: tuple[float, ...],
    projects: int,
    method: IntervalMethod,
    mode: RhoMode,
    resamples: int,
    first_seed: int,
) -> dict[str, float]:
    """Coverage, mean half-width, spread and bias of rho over ``projects`` simulated projects."""
    truth = true_rho(x)
    settings = ProjectSettings(interval_method=method, rho_mode=mode, bootstrap_resamples=resamples)
    rows = []
    for seed in range(first_seed, first_seed + projects):
        labels = rater_model_project(n_items, x, SKEWED, 2, 0.2, seed=seed)
        m = compute_measures(labels, settings, seed=seed).measures["rho"]
        low = np.nan if m.ci_low is None else m.ci_low
        high = np.nan if m.ci_high is None else m.ci_high
        rows.append((m.value, low, high))
    arr = np.asarray(rows, dtype=float)
    covered = (arr[:, 1] <= truth) & (truth <= arr[:, 2])
    return {
        "truth": truth,
        "coverage": float(covered.mean()),
        "half_width": float(np.nanmean(arr[:, 2] - arr[:, 1]) / 2),
        "spread": float(arr[:, 0].std()),
        "bias": float(arr[:, 0].mean() - truth),
        "missing": float(np.isnan(arr[:, 1]).mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=40)
    parser.add_argument("--items", default="300,3000")
    parser.add_argument("--methods", default="jackknife,bootstrap")
    parser.add_argument("--modes", default="approximate,exact")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    print(
        f"{'items':>6} {'raters':<12} {'method':<10} {'form':<12} {'cover':>6} "
        f"{'half':>7} {'spread':>7} {'bias':>7} {'none':>5} {'s':>6}"
    )
    for n_items in (int(n) for n in args.items.split(",")):
        for label, x in (("graded", GRADED), ("with random", WITH_RANDOM)):
            for method in (IntervalMethod(m) for m in args.methods.split(",")):
                for mode in (RhoMode(m) for m in args.modes.split(",")):
                    start = time.perf_counter()
                    r = cell(
                        n_items, x, args.projects, method, mode, args.resamples, args.first_seed
                    )
                    print(
                        f"{n_items:>6} {label:<12} {method.value:<10} {mode.value:<12} "
                        f"{r['coverage']:>6.0%} {r['half_width']:>7.4f} {r['spread']:>7.4f} "
                        f"{r['bias']:>+7.4f} {r['missing']:>5.0%} "
                        f"{time.perf_counter() - start:>6.1f}",
                        flush=True,
                    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
