"""Size of the kept state (issue 22): bytes of the stored payloads (20 groups + the pair
tables' slot) by kind of array, and the time to build them, for projects of many raters.

    nice -n 10 .venv/bin/python benchmarks/kept_state_size.py --items 100000 --raters 200 \
        --per-item 5

Prints one line per array family (before this branch: the per-group sums; S against the
group's dense sums and triples; the raters' confusion; the pair tables) and the load average.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from auditor.domain import CollapsePolicy
from auditor.stats.kept import contributions, item_groups
from auditor.stats.kept_models import DENSE
from auditor.stats.synthetic import synthetic_project
from auditor.storage.kept_repository import to_payload

FAMILIES = {
    "S against the group (dense)": ("s_items", "s_ao", "s_amax", "s_share"),
    "S against the group (triples, ungrouped)": ("triple_key", "triple_weight"),
    "raters' confusion": ("confusion",),
    "pair tables (ungrouped)": ("pair_key", "pair_confusion"),
    "ordinal sums": ("products", "inverse_m1", "coincidences"),
    "pair differences (grouped, sparse)": ("difference_key", "pair_difference"),
    "models (dense)": tuple(DENSE),
    "models (pair weights, ungrouped)": ("model_pair_key", "model_pair_weight"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--raters", type=int, default=200)
    parser.add_argument("--per-item", type=float, default=5.0, help="human raters per item")
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--models", type=int, default=0)
    args = parser.parse_args()
    labels = synthetic_project(
        args.items,
        args.raters,
        n_categories=args.categories,
        missing=1.0 - args.per_item / args.raters,
        repeat_share=0.02,
        n_models=args.models,
        seed=1,
    )
    groups = item_groups(np.arange(labels.n_items), args.groups)
    started = time.process_time()
    state = contributions(labels, CollapsePolicy.FIRST, groups, args.groups)
    seconds = time.process_time() - started
    sizes: dict[str, int] = {}
    for g in range(args.groups):  # bounded by the groups
        for name, array in state.group(g).per_group().items():
            sizes[name] = sizes.get(name, 0) + len(to_payload({name: array}))
    for name, array in state.ungrouped().items():
        sizes[name] = sizes.get(name, 0) + len(to_payload({name: array}))
    new = {n for names in FAMILIES.values() for n in names}
    total = sum(sizes.values())
    print(
        f"{labels.n_labels:,} labels, {args.items:,} items, {args.raters} raters, "
        f"{args.per_item} per item, K={args.categories}, G={args.groups}: "
        f"build {seconds:.2f} s CPU, {state.triple_key.shape[0]:,} triples, "
        f"{state.pair_key.shape[0]:,} pairs"
    )
    old = sum(v for n, v in sizes.items() if n not in new)
    print(f"  sums kept before this branch: {old / 1e6:8.2f} MB")
    for family, names in FAMILIES.items():
        print(f"  {family:30s}: {sum(sizes.get(n, 0) for n in names) / 1e6:8.2f} MB")
    print(f"  total: {total / 1e6:.2f} MB; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
