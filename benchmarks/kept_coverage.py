"""Coverage of the kept statistics' delete-a-group jackknife by simulation (issue 22 item 2).

    .venv/bin/python benchmarks/kept_coverage.py                    # 200 projects per cell
    .venv/bin/python benchmarks/kept_coverage.py --projects 400 --groups 10,20,40

Projects are drawn from the section 8 rater model (``auditor.stats.synthetic``): 5 human
raters of reliability .9/.8/.7/.6/.5, K = 3 categories with shares .6/.3/.1, 20% of the
(item, rater) slots missing, 10% of the labels repeated. The truth of each measure is its
value on one project of 400,000 items from the same model (its sampling error is far below the
intervals' widths). For every cell (300 or 3,000 items; G groups) the script prints, per kept
measure, the share of projects whose 95% grouped-jackknife interval covers the truth, beside
the share for today's delete-one-item jackknife (``compute_measures``) on the same projects,
and the mean half-widths, with the load average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.domain import CollapsePolicy, IntervalMethod, LabelArrays, ProjectSettings
from auditor.stats import compute_measures
from auditor.stats.kept import KEPT_MEASURES, contributions, item_groups
from auditor.stats.kept_estimates import (
    KeptEstimate,
    RhoOptions,
    against_group_estimates,
    estimates,
)
from auditor.stats.synthetic import synthetic_project

RELIABILITY = (0.9, 0.8, 0.7, 0.6, 0.5)
MEASURES = (*KEPT_MEASURES, "rho")  # rho: approximate form, unrated pooled (the defaults)
# each rater's S against the group (its replicates scale the chance term: kept_estimates)
S_ROWS = tuple(f"s_vs_group:{p}" for p in range(len(RELIABILITY)))
PREVALENCE = (0.6, 0.3, 0.1)


def project(n_items: int, seed: int) -> LabelArrays:
    return synthetic_project(
        n_items,
        len(RELIABILITY),
        n_categories=3,
        reliability=RELIABILITY,
        prevalence=PREVALENCE,
        repeat_share=0.1,
        seed=seed,
    )


def kept_values(labels: LabelArrays, groups: int) -> dict[str, KeptEstimate]:
    ids = np.arange(labels.n_items)
    state = contributions(labels, CollapsePolicy.FIRST, item_groups(ids, groups), groups)
    out = estimates(state, rho=RhoOptions())
    against = against_group_estimates(state)
    for p, row in enumerate(S_ROWS):
        value = float(against.value[p])
        low, high = float(against.low[p]), float(against.high[p])
        out[row] = KeptEstimate(
            value if np.isfinite(value) else None,
            low if np.isfinite(low) else None,
            high if np.isfinite(high) else None,
            groups,
            against.reason[p],
        )
    return out


def truth(n_items: int) -> dict[str, float]:
    values = kept_values(project(n_items, seed=10**6), 20)
    return {name: float(e.value) for name, e in values.items() if e.value is not None}


def cell(n_items: int, groups: int, projects: int, truths: dict[str, float]) -> None:
    rows = (*MEASURES, *S_ROWS)
    covered = {name: 0 for name in rows}
    covered_items = {name: 0 for name in rows}
    width: dict[str, list[float]] = {name: [] for name in rows}
    width_items: dict[str, list[float]] = {name: [] for name in rows}
    settings = ProjectSettings(interval_method=IntervalMethod.JACKKNIFE)
    for seed in range(projects):
        labels = project(n_items, seed)
        ours = kept_values(labels, groups)
        full = compute_measures(labels, settings)
        theirs = dict(full.measures)
        for p, row in enumerate(S_ROWS):
            theirs[row] = full.raters[p].s_vs_group
        for name in rows:
            e = ours[name]
            if e.low is not None and e.high is not None:
                covered[name] += e.low <= truths[name] <= e.high
                width[name].append((e.high - e.low) / 2)
            m = theirs[name]
            if m.ci_low is not None and m.ci_high is not None:
                covered_items[name] += m.ci_low <= truths[name] <= m.ci_high
                width_items[name].append((m.ci_high - m.ci_low) / 2)
    print(f"\n{n_items:,} items, G = {groups} groups, {projects} projects:")
    print(
        f"  {'measure':<22} {'truth':>7} {'grouped':>8} {'half-w':>7} {'per-item':>9} {'half-w':>7}"
    )
    for name in rows:
        print(
            f"  {name:<22} {truths[name]:7.3f} {covered[name] / projects:8.3f} "
            f"{np.mean(width[name]):7.4f} {covered_items[name] / projects:9.3f} "
            f"{np.mean(width_items[name]):7.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--items", default="300,3000")
    parser.add_argument("--groups", default="20")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")
    started = time.perf_counter()
    truths = truth(400_000)
    print(f"truth from 400,000 items ({time.perf_counter() - started:.0f} s)")
    for n_items in [int(s) for s in args.items.split(",")]:
        for groups in [int(s) for s in args.groups.split(",")]:
            cell(n_items, groups, args.projects, truths)
    print(f"\nload average {os.getloadavg()[0]:.2f}; {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
