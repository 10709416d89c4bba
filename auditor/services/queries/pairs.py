"""Pairwise agreement for many raters (issue 22 item 2): above a few dozen raters the
rater-by-rater matrix cannot be read (200 raters: 40,000 cells), so the page shows what a
person reads instead: each rater's mean Cohen's kappa with the others, its spread and her
lowest pair, and the weakest pairs. The full matrix stays on demand: a rater's page lists her
row, and the dashboard serves the whole of it as CSV and JSON."""

from __future__ import annotations

import csv
import io
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from auditor.services.queries.attention import natural_key

# Up to this many raters the page draws the matrix; above it, the summary.
MATRIX_LIMIT = 30
# The weakest pairs listed, and the fewest shared items a listed pair rests on.
WEAKEST = 10
MIN_SHARED = 5


@dataclass(frozen=True)
class RaterPairs:
    rater: str
    mean: float | None  # over her pairs with a defined kappa
    spread: float | None  # their standard deviation (None below two pairs)
    lowest: float | None
    lowest_with: str | None
    pairs: int  # pairs with a defined kappa
    undefined: int  # pairs sharing items whose kappa is undefined


@dataclass(frozen=True)
class PairSummary:
    raters: tuple[RaterPairs, ...]  # lowest mean first, then naturally by name
    weakest: tuple[Any, ...]  # PairCell, lowest kappa first
    cells: int


def summarize(labels: Sequence[str], pairs: Sequence[Any]) -> PairSummary:
    """The summary of ``pairs`` (``PairCell``s: rater_a, rater_b, kappa, n_items)."""
    values: dict[str, list[tuple[float, str]]] = {name: [] for name in labels}
    undefined: dict[str, int] = dict.fromkeys(labels, 0)
    for cell in pairs:
        value = (cell.kappa or {}).get("value")
        for me, other in ((cell.rater_a, cell.rater_b), (cell.rater_b, cell.rater_a)):
            if value is None:
                undefined[me] = undefined.get(me, 0) + 1
            else:
                values.setdefault(me, []).append((float(value), other))
    rows = []
    for name, mine in values.items():
        numbers = [v for v, _ in mine]
        low = min(mine) if mine else None
        rows.append(
            RaterPairs(
                name,
                statistics.fmean(numbers) if numbers else None,
                statistics.stdev(numbers) if len(numbers) > 1 else None,
                low[0] if low else None,
                low[1] if low else None,
                len(numbers),
                undefined.get(name, 0),
            )
        )
    rows.sort(
        key=lambda r: (r.mean is None, r.mean if r.mean is not None else 0.0, natural_key(r.rater))
    )
    defined = [
        c
        for c in pairs
        if (c.kappa or {}).get("value") is not None and (c.n_items or 0) >= MIN_SHARED
    ]
    weakest = sorted(defined, key=lambda c: c.kappa["value"])[:WEAKEST]
    return PairSummary(tuple(rows), tuple(weakest), len(pairs))


COLUMNS = ("rater_a", "rater_b", "kappa", "ci_low", "ci_high", "n_items", "reason")


def pair_rows(pairs: Sequence[Any]) -> list[dict[str, Any]]:
    """One plain row per pair, naturally ordered: the CSV's and the JSON's."""
    rows = [
        {
            "rater_a": c.rater_a,
            "rater_b": c.rater_b,
            "kappa": (c.kappa or {}).get("value"),
            "ci_low": (c.kappa or {}).get("ci_low"),
            "ci_high": (c.kappa or {}).get("ci_high"),
            "n_items": c.n_items,
            "reason": (c.kappa or {}).get("reason"),
        }
        for c in pairs
    ]
    rows.sort(key=lambda r: (natural_key(r["rater_a"]), natural_key(r["rater_b"])))
    return rows


def pairs_csv(pairs: Sequence[Any]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in pair_rows(pairs):
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()
