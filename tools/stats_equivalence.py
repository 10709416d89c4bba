"""Check that a rewrite of ``auditor.stats`` gives the same numbers as a base revision.

    python tools/stats_equivalence.py [--base HEAD] [--datasets 800] [--tolerance 1e-12]

Exports the base revision (``git archive``) to a temporary directory, computes every measure
of ``compute_measures`` (values, intervals, per-rater, per-model and pairwise results) and the
kappa_S leave-one-out values on the same random datasets with the base tree and with this
working tree (each in its own process), and compares them: numbers to ``tolerance`` (relative
above 1, absolute below), everything else (reasons, counts, bands, None) exactly. Exit status 1
on any difference. The datasets cover what the fast paths branch on: repeats (up to every
cell), model raters, missing labels, one to a few items, a single category in use, ties of
``order``, sparse tables (many raters, a few per item), every collapse policy, rater model,
rho mode and rho_unrated policy, and the three interval methods (bootstrap with its seed).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import math
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def dataset(seed: int) -> Any:
    """A random project; every fifth one sparse (many raters, one to four per item)."""
    from auditor.domain import LabelArrays

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    if seed % 40 == 13:  # nothing labeled (an empty window): no rater, or raters without labels
        n_raters, n_items = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        item = rater = np.zeros(0, dtype=np.int64)
    elif seed % 5 == 4:
        n_raters, n_items = int(rng.integers(20, 60)), int(rng.integers(2, 200))
        per_item = rng.integers(1, 5, size=n_items)
        item = np.repeat(np.arange(n_items), per_item)
        rater = np.concatenate([rng.choice(n_raters, size=m, replace=False) for m in per_item])
    else:
        n_raters = int(rng.integers(1, 13))
        n_items = int(rng.choice([1, 2, 3, 5, 8, 12, 30, 80, 300]))
        missing = float(rng.choice([0.0, 0.0, 0.2, 0.5, 0.85]))
        item, rater = (a.ravel() for a in np.meshgrid(np.arange(n_items), np.arange(n_raters)))
        keep = rng.random(item.shape[0]) >= missing
        item, rater = item[keep], rater[keep]
    repeat_share = float(rng.choice([0.0, 0.0, 0.05, 0.3, 1.0]))
    looks = np.where(
        rng.random(item.shape[0]) < repeat_share, rng.integers(2, 4, size=item.shape[0]), 1
    )
    item, rater = np.repeat(item, looks), np.repeat(rater, looks)
    style = rng.integers(0, 4)
    if style == 0:
        category = rng.integers(0, k, size=item.shape[0])
    elif style == 1:  # a single category in use
        category = np.zeros(item.shape[0], dtype=np.int64)
    elif style == 2:  # raters mostly agree
        truth = rng.integers(0, k, size=max(n_items, 1))
        noisy = rng.random(item.shape[0]) < 0.3
        category = np.where(noisy, rng.integers(0, k, size=item.shape[0]), truth[item])
    else:  # skewed prevalence
        category = rng.choice(k, size=item.shape[0], p=rng.dirichlet(np.ones(k) * 0.5))
    shuffle = rng.permutation(item.shape[0])
    item, rater, category = item[shuffle], rater[shuffle], category[shuffle]
    is_model = np.zeros(n_raters, dtype=bool)
    if n_raters > 2:
        n_models = int(rng.integers(0, 3))
        is_model[rng.choice(n_raters, size=n_models, replace=False)] = True
    return LabelArrays(
        item=item.astype(np.int64),
        rater=rater.astype(np.int64),
        category=category.astype(np.int64),
        order=rng.integers(0, 5, size=item.shape[0]).astype(np.int64),  # ties on purpose
        rater_is_model=is_model,
        category_names=tuple(f"c{i}" for i in range(k)),
        rater_names=tuple(f"r{i}" for i in range(n_raters)),
        item_names=tuple(f"i{i}" for i in range(n_items)),
    )


def settings_for(seed: int) -> Any:
    from auditor.domain import (
        CollapsePolicy,
        IntervalMethod,
        ProjectSettings,
        RaterModel,
        RhoMode,
        RhoUnrated,
    )

    rng = np.random.default_rng(seed + 10**6)
    methods = [IntervalMethod.JACKKNIFE, IntervalMethod.JACKKNIFE, IntervalMethod.NONE]
    return ProjectSettings(
        collapse=list(CollapsePolicy)[rng.integers(0, 3)],
        rho_mode=list(RhoMode)[rng.integers(0, 2)],
        rho_unrated=list(RhoUnrated)[rng.integers(0, 3)],
        rater_model=list(RaterModel)[rng.integers(0, 2)],
        interval_method=[*methods, IntervalMethod.BOOTSTRAP][seed % 4],
        interval_level=float(rng.choice([0.8, 0.9, 0.95, 0.99])),
        bootstrap_resamples=int(rng.choice([10, 50, 200])),
    )


def plain(value: Any) -> Any:
    """Dataclasses, arrays and enums as plain dicts, lists and values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, np.generic):
        return value.item()
    return value


def dump(path: Path, n: int) -> None:
    """Every dataset's results, pickled to ``path`` (runs in the tree on PYTHONPATH)."""
    from auditor.stats import compute_measures, kappa_s
    from auditor.stats.tables import collapse, group_table

    results = []
    for seed in range(n):
        labels, settings = dataset(seed), settings_for(seed)
        try:
            measures = plain(compute_measures(labels, settings, seed=seed))
        except Exception as error:  # an error must be the same in both trees
            measures = ("error", repr(error))
        table = group_table(collapse(labels, settings.collapse), labels.rater_is_model)
        raw = {"kappa_s_loo": kappa_s.leave_one_out(table).tolist()} if table.n_pairable else {}
        results.append((seed, measures, raw))
    path.write_bytes(pickle.dumps(results))


def differences(old: Any, new: Any, path: str, tolerance: float) -> list[str]:
    if isinstance(old, int | float) and isinstance(new, int | float):
        if isinstance(old, float) and math.isnan(old) and math.isnan(new):
            return []
        if old == new or abs(old - new) <= tolerance * max(1.0, abs(old)):
            return []
        return [f"{path}: {old!r} != {new!r}"]
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            return [f"{path}: keys {sorted(old)} != {sorted(new)}"]
        nested = (differences(old[key], new[key], f"{path}.{key}", tolerance) for key in old)
        return [d for found in nested for d in found]
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{path}: length {len(old)} != {len(new)}"]
        pairs = enumerate(zip(old, new, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]", tolerance)]
    return [] if old == new else [f"{path}: {old!r} != {new!r}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="git revision to compare against")
    parser.add_argument("--datasets", type=int, default=800)
    parser.add_argument("--tolerance", type=float, default=1e-12)
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.dump is not None:
        dump(options.dump, options.datasets)
        return
    with tempfile.TemporaryDirectory(prefix="stats-equivalence-") as directory:
        base = Path(directory) / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", options.base], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        outputs = []
        for tree, name in ((base, "base"), (ROOT, "work")):
            out = Path(directory) / f"{name}.pkl"
            env = dict(os.environ, PYTHONPATH=str(tree))
            command = [sys.executable, __file__, "--dump", str(out)]
            subprocess.run([*command, "--datasets", str(options.datasets)], check=True, env=env)
            outputs.append(pickle.loads(out.read_bytes()))
    found = [
        d
        for (seed, old, old_raw), (_, new, new_raw) in zip(*outputs, strict=True)
        for d in differences([old, old_raw], [new, new_raw], f"dataset {seed}", options.tolerance)
    ]
    print(f"{options.datasets} datasets against {options.base}: {len(found)} differences")
    for line in found[:30]:
        print(" ", line[:300])
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
