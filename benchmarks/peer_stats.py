"""The peer of ``auditor stats`` one-shot (issue 13, item 4): pandas reads a long-format label
CSV (item, rater, label, ...), krippendorff computes alpha (nominal) and statsmodels Fleiss'
kappa: two measures, whole process. Run as a subprocess by ``stats_oneshot.py``.

    .venv/bin/python benchmarks/peer_stats.py labels.csv
"""

from __future__ import annotations

import sys

import krippendorff
import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa


def main(path: str) -> None:
    frame = pd.read_csv(path, usecols=["item", "rater", "label"], dtype=str)
    codes, categories = pd.factorize(frame["label"], sort=True)
    frame["code"] = codes
    table = frame.pivot_table(index="rater", columns="item", values="code", aggfunc="first")
    alpha = krippendorff.alpha(
        reliability_data=table.to_numpy(dtype=float), level_of_measurement="nominal"
    )
    complete = table.T.dropna().to_numpy(dtype=np.int64)
    counts, _ = aggregate_raters(complete, n_cat=len(categories))
    kappa = fleiss_kappa(counts, method="fleiss")
    print(f"alpha {alpha:.4f} fleiss_kappa {kappa:.4f} items {table.shape[1]}")


if __name__ == "__main__":
    main(sys.argv[1])
