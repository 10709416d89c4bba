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
    rows = [(c.rater_a, c.rater_b, (c.kappa or {}).get("value"), c.n_items, c) for c in pairs]
    return summarize_rows(labels, rows)


def summarize_rows(labels: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> PairSummary:
    """The summary of plain rows (rater_a, rater_b, kappa value or None, shared items, and
    what to list among the weakest pairs): no object per pair beyond the row."""
    values: dict[str, list[tuple[float, str]]] = {name: [] for name in labels}
    undefined: dict[str, int] = dict.fromkeys(labels, 0)
    for a, b, value, _, _ in rows:
        if value is None:
            undefined[a] = undefined.get(a, 0) + 1
            undefined[b] = undefined.get(b, 0) + 1
        else:
            values.setdefault(a, []).append((value, b))
            values.setdefault(b, []).append((value, a))
    raters = []
    for name, mine in values.items():
        numbers = [v for v, _ in mine]
        low = min(mine) if mine else None
        raters.append(
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
    raters.sort(
        key=lambda r: (r.mean is None, r.mean if r.mean is not None else 0.0, natural_key(r.rater))
    )
    defined = [r for r in rows if r[2] is not None and (r[3] or 0) >= MIN_SHARED]
    weakest = tuple(r[4] for r in sorted(defined, key=lambda r: r[2])[:WEAKEST])
    return PairSummary(tuple(raters), weakest, len(rows))


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
