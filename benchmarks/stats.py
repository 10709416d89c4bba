"""Benchmark of auditor.stats against krippendorff and statsmodels on the same synthetic data.

    .venv/bin/python benchmarks/stats.py            # 1M and 10M labels
    .venv/bin/python benchmarks/stats.py --quick    # 1M labels only
    .venv/bin/python benchmarks/stats.py --against /tmp/base --rounds 6   # old vs new code

``--against DIR`` compares the whole measure set (no intervals, 10M labels) of the code in DIR
(a directory holding an older ``auditor`` package, e.g. ``git archive REV auditor | tar -x -C
DIR``) with this checkout's, nominal and ordinal (issue 24: within 1.3x of the old nominal
time), each in its own fresh process, alternated over ``--rounds`` rounds, with the load
average of every round.

Projects: 10 human raters, 4 categories, 20% missing, 2% repeated presentations (issue 3,
item 7). Times are the best of ``--repeat`` runs after one warm-up (the machine is shared:
the load average is printed before and after). Peak memory of the whole measure set is
measured in a fresh child process (peak RSS above the RSS after loading the labels) and with
tracemalloc (NumPy reports its buffers to it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import krippendorff
import numpy as np
import psutil
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from auditor.domain import IntervalMethod, LabelArrays, ProjectSettings, RaterModel, RhoMode
from auditor.stats import (
    alpha,
    cohen,
    compute_measures,
    group,
    intervals,
    kappa,
    kappa_s,
    reestimate,
    rnr,
)
from auditor.stats import rho as rho_module
from auditor.stats.selfagreement import fit, self_agreement
from auditor.stats.synthetic import items_for, synthetic_project
from auditor.stats.tables import collapse, group_table

RATERS, CATEGORIES, MISSING, REPEATS = 10, 4, 0.2, 0.02
TARGETS = {
    "alpha_ratio_10m": 5.0,
    "whole_10m_s": 2.0,
    "whole_10m_peak_gb": 1.5,
    "jackknife_1m_s": 2.0,
    "bootstrap_1m_s": 20.0,
}


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` runs after a warm-up run."""
    fn()  # warm-up: first-touch page faults and lazy imports are not the steady state
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def cpu_of(fn: Callable[[], object], repeat: int) -> float:
    """Best process CPU time (less sensitive than wall time to other jobs on a shared machine;
    BLAS may use both cores, so it can exceed the wall time)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def project(n_labels: int, seed: int = 1) -> LabelArrays:
    n_items = items_for(n_labels, RATERS, MISSING, REPEATS)
    return synthetic_project(
        n_items,
        RATERS,
        n_categories=CATEGORIES,
        missing=MISSING,
        repeat_share=REPEATS,
        reliability=np.linspace(0.5, 0.9, RATERS),
        seed=seed,
    )


def save(labels: LabelArrays, path: str) -> None:
    """The label columns for a fresh child process (``saved`` reads them back)."""
    np.savez(
        path,
        item=labels.item,
        rater=labels.rater,
        category=labels.category,
        order=labels.order,
        rater_is_model=labels.rater_is_model,
    )


def saved(path: str) -> LabelArrays:
    """The labels a parent process saved with ``np.savez`` (for a fresh child process)."""
    data = np.load(path)
    return LabelArrays(
        item=data["item"],
        rater=data["rater"],
        category=data["category"],
        order=data["order"],
        rater_is_model=data["rater_is_model"],
        category_names=tuple(f"c{c}" for c in range(CATEGORIES)),
    )


def child_memory(path: str) -> None:
    """Run in a fresh process: load labels, then the whole measure set; print peak RSS."""
    labels = saved(path)
    base = psutil.Process().memory_info().rss
    start = time.perf_counter()
    compute_measures(labels, ProjectSettings(interval_method=IntervalMethod.NONE))
    seconds = time.perf_counter() - start
    print(json.dumps({"base": base, "peak": _high_water_rss(), "seconds": seconds}))


def _high_water_rss() -> int:
    """Peak RSS of this process image in bytes. VmHWM belongs to the current address space;
    getrusage's ru_maxrss does not: Linux carries the parent's peak over fork + exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def memory_in_child(labels: LabelArrays, hugepages: bool = True) -> dict[str, float]:
    """Peak RSS of the whole set in a fresh process; ``hugepages`` False sets NumPy's
    NUMPY_MADVISE_HUGEPAGE=0 (transparent huge pages round partly touched regions up)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "labels.npz")
        save(labels, path)
        done = subprocess.run(
            [sys.executable, __file__, "--child-memory", path],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "NUMPY_MADVISE_HUGEPAGE": "1" if hugepages else "0"},
        )
    return json.loads(done.stdout)


def traced_peak(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def run(n_labels: int, repeat: int, resamples: int, intervals_too: bool) -> dict[str, float]:
    labels = project(n_labels)
    none = ProjectSettings(interval_method=IntervalMethod.NONE)
    print(f"\n== {labels.n_labels:,} labels, {labels.n_items:,} items, {RATERS} raters ==")
    results: dict[str, float] = {}
    results["whole"] = best_of(lambda: compute_measures(labels, none), repeat)
    results["whole_cpu"] = cpu_of(lambda: compute_measures(labels, none), repeat)

    cells = collapse(labels)
    table = group_table(cells, labels.rater_is_model)
    bias = table.rater_bias()
    summed, squares = kappa.rater_sums(table, bias)
    chance = (summed**2 - squares) / (table.m * (table.m - 1))[:, None]
    prevalence = table.rater_counts.sum(axis=0) / table.rater_counts.sum()
    sa = self_agreement(
        cells.repeat_counts,
        cells.rater[cells.repeat_cell],
        cells.item[cells.repeat_cell],
        labels.n_raters,
    )
    rater_fit = fit(sa, prevalence, RaterModel.MOMENTS)
    rated = sa.n_items > 0

    def rho_of(mode: RhoMode) -> rho_module.Rho:
        return rho_module.rho(
            table, rater_fit.reliability, rated, prevalence, mode, none.rho_unrated
        )

    parts: dict[str, Callable[[], object]] = {
        "reshape (collapse + group table)": lambda: group_table(
            collapse(labels), labels.rater_is_model
        ),
        "observed agreement": lambda: kappa.observed_agreement(table).estimate(),
        "fleiss kappa": lambda: kappa.fleiss_kappa(table).estimate(),
        "krippendorff alpha": lambda: alpha.krippendorff_alpha(table).estimate(),
        "kappa_S (with rater sums)": lambda: kappa_s.estimate(table),
        "pairwise cohen": lambda: cohen.pairwise_cohen(table),
        "leave-one-out S (per rater)": lambda: group.leave_one_out_s(table, bias, summed, squares),
        "self-agreement + rater model (moments)": lambda: fit(
            self_agreement(
                cells.repeat_counts,
                cells.rater[cells.repeat_cell],
                cells.item[cells.repeat_cell],
                labels.n_raters,
            ),
            prevalence,
            RaterModel.MOMENTS,
        ),
        "rater model (max_entropy)": lambda: fit(sa, prevalence, RaterModel.MAX_ENTROPY),
        "rho (approximate)": lambda: rho_of(RhoMode.APPROXIMATE),
        "rho (exact)": lambda: rho_of(RhoMode.EXACT),
        "expected agreement split": lambda: rnr.split(table, sa.sa, rated),
    }
    print(
        f"{'whole measure set (no intervals)':<40}{results['whole']:8.3f} s "
        f"(CPU {results['whole_cpu']:.3f} s)"
    )
    for name, fn in parts.items():
        results[name] = best_of(fn, repeat)
        print(f"  {name:<38}{results[name]:8.3f} s")
    results["rho_exact_ratio"] = results["rho (exact)"] / results["rho (approximate)"]
    exact = ProjectSettings(interval_method=IntervalMethod.NONE, rho_mode=RhoMode.EXACT)
    results["whole_exact"] = best_of(lambda: compute_measures(labels, exact), repeat)
    print(
        f"  rho exact / approximate {results['rho_exact_ratio']:.2f}x; whole set with rho exact "
        f"{results['whole_exact']:.3f} s ({results['whole_exact'] / results['whole']:.2f}x)"
    )
    del chance

    # peers on the same data: the dense (raters x items) matrix they need is built untimed
    dense = np.full((labels.n_raters, labels.n_items), np.nan)
    dense[cells.rater, cells.item] = cells.category
    ours_alpha = best_of(
        lambda: alpha.krippendorff_alpha(
            group_table(collapse(labels), labels.rater_is_model)
        ).estimate(),
        repeat,
    )
    peer_alpha = best_of(
        lambda: krippendorff.alpha(
            reliability_data=dense,
            level_of_measurement="nominal",
            value_domain=list(range(CATEGORIES)),
        ),
        1,
    )
    ours = alpha.krippendorff_alpha(table).estimate()
    theirs = krippendorff.alpha(
        reliability_data=dense, level_of_measurement="nominal", value_domain=list(range(CATEGORIES))
    )
    results["alpha_ratio"] = peer_alpha / ours_alpha

    def peer_from_long() -> float:
        # The peer from the same long arrays: one label per (item, rater) (our own collapse,
        # the fastest we have) into the dense matrix it takes, then its alpha.
        one = collapse(labels)
        matrix = np.full((labels.n_raters, labels.n_items), np.nan)
        matrix[one.rater, one.item] = one.category
        return krippendorff.alpha(
            reliability_data=matrix,
            level_of_measurement="nominal",
            value_domain=list(range(CATEGORIES)),
        )

    peer_alpha_long = best_of(peer_from_long, 1)
    results["alpha_long_ratio"] = peer_alpha_long / ours_alpha
    table_alpha = results["krippendorff alpha"]
    results["alpha_table_ratio"] = peer_alpha / table_alpha
    print(
        f"krippendorff.alpha on a prepared dense matrix {peer_alpha:8.3f} s "
        f"(|difference| {abs(ours - theirs):.1e})\n"
        f"  ours from the group table (the equivalent input) {table_alpha:8.3f} s: "
        f"{results['alpha_table_ratio']:.1f}x faster\n"
        f"  ours from the long label arrays (collapse included) {ours_alpha:8.3f} s: "
        f"{results['alpha_ratio']:.1f}x faster\n"
        f"krippendorff.alpha from the same long arrays (collapse + its dense matrix) "
        f"{peer_alpha_long:8.3f} s: ours from the long arrays {results['alpha_long_ratio']:.1f}x "
        "faster"
    )
    # statsmodels assumes every item has the same number of raters: a missing label becomes
    # an extra category, so this times the same amount of work; its value is not comparable
    filled = np.where(np.isnan(dense.T), CATEGORIES, dense.T).astype(np.int64)

    def statsmodels_fleiss() -> float:
        counts, _ = aggregate_raters(filled, n_cat=CATEGORIES + 1)
        return fleiss_kappa(counts, method="fleiss")

    peer_fleiss = best_of(statsmodels_fleiss, 1)
    ours_fleiss = best_of(
        lambda: kappa.fleiss_kappa(group_table(collapse(labels), labels.rater_is_model)).estimate(),
        repeat,
    )
    results["fleiss_ratio"] = peer_fleiss / ours_fleiss
    print(
        f"statsmodels aggregate_raters + fleiss_kappa {peer_fleiss:8.3f} s\n"
        f"  ours from the long label arrays (collapse included) {ours_fleiss:8.3f} s: "
        f"{results['fleiss_ratio']:.1f}x faster"
    )
    results["whole_vs_peers"] = (peer_alpha + peer_fleiss) / results["whole"]
    print(
        f"whole set ({results['whole']:.3f} s) vs the two peer calls together: "
        f"{results['whole_vs_peers']:.1f}x"
    )

    memory = memory_in_child(labels)
    results["peak_gb"] = (memory["peak"] - memory["base"]) / 1e9
    no_huge = memory_in_child(labels, hugepages=False)
    results["peak_gb_small_pages"] = (no_huge["peak"] - no_huge["base"]) / 1e9
    results["child_seconds"] = memory["seconds"]
    results["traced_gb"] = traced_peak(lambda: compute_measures(labels, none)) / 1e9
    print(
        f"peak memory of the whole set: RSS +{results['peak_gb']:.2f} GB over the loaded labels "
        f"(process peak {memory['peak'] / 1e9:.2f} GB; first run in a fresh process "
        f"{memory['seconds']:.3f} s); tracemalloc peak {results['traced_gb']:.2f} GB; "
        f"RSS +{results['peak_gb_small_pages']:.2f} GB with NUMPY_MADVISE_HUGEPAGE=0"
    )

    def rho_resampling() -> tuple[reestimate.Repeats, rho_module.Rho, np.ndarray]:
        # what compute_measures builds for rho's intervals (see auditor.stats.reestimate)
        result = rho_of(RhoMode.APPROXIMATE)
        pairs = rho_module.co_agreement(table, rated, none.rho_unrated, CATEGORIES)
        repeats = reestimate.repeats_for(
            sa.cell_sa,
            sa.cell_rater,
            sa.cell_item,
            table.items,
            table.counts,
            rated,
            reestimate.sqrt_reliability,
            None,
        )
        return repeats, result, pairs

    def rho_leave_one_out() -> np.ndarray:
        repeats, result, pairs = rho_resampling()
        return reestimate.leave_one_out(
            repeats,
            result.per_item,  # type: ignore[arg-type]
            result.used,  # type: ignore[arg-type]
            lambda y, p: rho_module.evaluate(pairs, y, p, RhoMode.APPROXIMATE),
        )

    if intervals_too:
        level = 0.95
        jack = {
            "kappa_S": lambda: intervals.jackknife(0.0, kappa_s.leave_one_out(table), level),
            "fleiss": lambda: intervals.jackknife(
                0.0, kappa.fleiss_kappa(table).leave_one_out(), level
            ),
            "alpha": lambda: intervals.jackknife(
                0.0, alpha.krippendorff_alpha(table).leave_one_out(), level
            ),
            "rho (Y re-estimated per item left out)": lambda: intervals.jackknife(
                0.0, rho_leave_one_out(), level
            ),
        }
        total = 0.0
        for name, fn in jack.items():
            seconds = best_of(fn, repeat)
            total += seconds
            print(f"  jackknife {name:<30}{seconds:8.3f} s")
        results["jackknife"] = total
        print(f"jackknife intervals kappa_S + Fleiss + alpha + rho {total:8.3f} s")
        results["jackknife_s"] = best_of(
            lambda: group.leave_one_out_s_intervals(table, bias, summed, squares, level), repeat
        )
        print(f"  jackknife S vs group (every rater){results['jackknife_s']:14.3f} s")

        def bootstrap() -> None:
            rng = np.random.default_rng(1)
            boot = kappa_s.Bootstrap(table)
            fleiss, kripp = kappa.fleiss_kappa(table), alpha.krippendorff_alpha(table)
            for weights in intervals.resample_weights(rng, table.n_pairable, resamples):
                boot.replicates(weights)
                fleiss.resampled(weights)
                kripp.resampled(weights)

        start = time.perf_counter()
        bootstrap()
        results["bootstrap"] = time.perf_counter() - start
        seconds = results["bootstrap"]
        print(f"bootstrap {resamples} resamples of kappa_S + Fleiss + alpha {seconds:8.3f} s")

        def rho_bootstrap() -> None:
            rng, extra = np.random.default_rng(1), np.random.default_rng(2)
            repeats, result, pairs = rho_resampling()
            for weights in intervals.resample_weights(rng, table.n_pairable, resamples):
                reestimate.replicates(
                    repeats,
                    result.per_item,  # type: ignore[arg-type]
                    result.used,  # type: ignore[arg-type]
                    lambda y, p: rho_module.evaluate(pairs, y, p, RhoMode.APPROXIMATE),
                    weights,
                    extra,
                )

        start = time.perf_counter()
        rho_bootstrap()
        results["bootstrap_rho"] = time.perf_counter() - start
        print(
            f"bootstrap {resamples} resamples of rho (Y re-estimated per resample) "
            f"{results['bootstrap_rho']:8.3f} s"
        )
        with_jack = best_of(lambda: compute_measures(labels, ProjectSettings()), repeat)
        with_jack_cpu = cpu_of(lambda: compute_measures(labels, ProjectSettings()), repeat)
        print(
            f"whole set with jackknife intervals (all measures) {with_jack:8.3f} s "
            f"(CPU {with_jack_cpu:.3f} s)"
        )
    return results


def child_time(path: str, scale: str, repeat: int) -> None:
    """Run in a fresh process on whichever ``auditor`` is first on sys.path: the best wall and
    CPU time of the whole set (no intervals) after one warm-up run."""
    labels = saved(path)
    none = ProjectSettings(interval_method=IntervalMethod.NONE)
    extra = {} if scale == "old" else {"scale": scale}
    results = {
        "wall": best_of(lambda: compute_measures(labels, none, **extra), repeat),
        "cpu": cpu_of(lambda: compute_measures(labels, none, **extra), repeat),
        "code": str(Path(sys.modules[compute_measures.__module__].__file__ or "").parents[1]),
    }
    print(json.dumps(results))


def against(baseline: str, n_labels: int, rounds: int, repeat: int) -> None:
    """Old (``baseline``) nominal vs new nominal and new ordinal, alternated, fresh processes."""
    labels = project(n_labels)
    here = str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "labels.npz")
        save(labels, path)
        del labels
        runs: dict[str, list[float]] = {"old": [], "nominal": [], "ordinal": []}
        print(f"{n_labels:,} labels, whole set without intervals, best of {repeat} per process")
        for round_ in range(rounds):
            line = []
            for name, root in (("old", baseline), ("nominal", here), ("ordinal", here)):
                done = subprocess.run(
                    [sys.executable, __file__, "--child-time", path, "--scale", name],
                    capture_output=True,
                    text=True,
                    check=True,
                    env={**os.environ, "PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1"},
                )
                seconds = json.loads(done.stdout.strip().splitlines()[-1])
                runs[name].append(seconds["cpu"])
                assert seconds["code"].startswith(root), (name, seconds["code"], root)
                line.append(f"{name} {seconds['wall']:.3f} s (CPU {seconds['cpu']:.3f})")
            print(f"round {round_ + 1}: " + ", ".join(line) + f"; load {os.getloadavg()}")
        old = float(np.median(runs["old"]))
        for name in ("nominal", "ordinal"):
            ratios = np.asarray(runs[name]) / np.asarray(runs["old"])
            print(
                f"{name}: median CPU {np.median(runs[name]):.3f} s against {old:.3f} s, "
                f"ratio per round {', '.join(f'{r:.2f}' for r in ratios)} "
                f"(median {np.median(ratios):.2f}x)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1M labels only")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--child-memory", help=argparse.SUPPRESS)
    parser.add_argument("--child-time", help=argparse.SUPPRESS)
    parser.add_argument("--scale", default="nominal", help=argparse.SUPPRESS)
    parser.add_argument("--against", help="directory of an older auditor package to compare")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--labels", type=int, default=10_000_000)
    args = parser.parse_args()
    if args.child_memory:
        child_memory(args.child_memory)
        return
    if args.child_time:
        child_time(args.child_time, args.scale, args.repeat)
        return
    if args.against:
        print(f"cpus {os.cpu_count()}, load average before {os.getloadavg()}")
        against(args.against, args.labels, args.rounds, args.repeat)
        return
    print(f"cpus {os.cpu_count()}, load average before {os.getloadavg()}")
    small = run(1_000_000, args.repeat, args.resamples, intervals_too=True)
    big = None if args.quick else run(10_000_000, args.repeat, args.resamples, False)
    print(f"\nload average after {os.getloadavg()}")
    print("targets (issue 3 item 7):")
    print(f"  jackknife at 1M <= {TARGETS['jackknife_1m_s']} s: {small['jackknife']:.3f} s")
    print(f"  bootstrap 1000 at 1M <= {TARGETS['bootstrap_1m_s']} s: {small['bootstrap']:.3f} s")
    if big is not None:
        print(
            f"  alpha >= {TARGETS['alpha_ratio_10m']}x krippendorff at 10M: "
            f"{big['alpha_table_ratio']:.1f}x from the table, "
            f"{big['alpha_ratio']:.1f}x from long arrays against the prepared matrix, "
            f"{big['alpha_long_ratio']:.1f}x when both start from the long arrays"
        )
        print(
            f"  whole set at 10M <= {TARGETS['whole_10m_s']} s: {big['whole']:.3f} s wall, "
            f"{big['whole_cpu']:.3f} s CPU"
        )
        print(
            f"  whole set peak at 10M <= {TARGETS['whole_10m_peak_gb']} GB: "
            f"+{big['peak_gb']:.2f} GB RSS (+{big['peak_gb_small_pages']:.2f} GB without huge "
            f"pages), {big['traced_gb']:.2f} GB traced"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
