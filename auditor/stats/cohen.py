"""Cohen's kappa for every pair of group raters on the items both labeled (docs/measures.md,
"Project measures").

Reference: Cohen (1960). All pairs at once: one ``bincount`` over the within-item label pairs
gives the K x K confusion table of every rater pair.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from auditor.stats.intervals import MIN_ITEMS_FOR_ZERO_SPREAD, UPPER_BOUND, z_value
from auditor.stats.tables import GroupTable, onehot_blocks, within_item_pairs
from auditor.stats.totals import safe_ratio

_MAX_DENSE_CODES = 1 << 25
# With at most this many (rater, category) columns the confusion counts are one Gram matrix
# Z'Z of the items' one-hot labels (a BLAS product per cached block of items), cheaper than a
# bincount per rater; blocks hold GRAM_BLOCK_CELLS cells (512 kB).
GRAM_MAX_COLUMNS = 64
GRAM_BLOCK_CELLS = 1 << 16


@dataclass(frozen=True)
class PairwiseCohen:
    """rater_a, rater_b : (P,) indices, a < b; n_items : (P,); kappa : (P,), NaN if undefined;
    confusion : (P, K, K) counts of shared items by (category of a, category of b)."""

    rater_a: np.ndarray
    rater_b: np.ndarray
    n_items: np.ndarray
    kappa: np.ndarray
    confusion: np.ndarray
    # sum over the labels of (rater, category) of per-item ``carry`` rows, (R K, F), when the
    # Gram path could sum it in the same pass over the one-hot blocks (else None)
    carried: np.ndarray | None = None


def _tally_by_rater_pairs(table: GroupTable) -> np.ndarray:
    """Confusion counts, flat (R * R * K * K,), from one column per rater: with few raters a
    ``bincount`` per rater pair over the items is cheaper than enumerating label pairs."""
    n_raters, k = table.rater_counts.shape
    # 0: not labeled; written in label order (item, rater), then one transposing copy
    given = np.zeros((table.n_pairable, n_raters), dtype=np.int16)
    given[table.label_item, table.label_rater] = table.label_category + 1
    given = given.T.copy()
    tally = np.zeros((n_raters, n_raters, k * k), dtype=np.int64)
    cells = (k + 1) ** 2
    for a in range(n_raters - 1):  # bounded by the number of raters
        # all later raters b at once: row r of ``code`` holds b = a + 1 + r, offset by r cells
        rows = n_raters - a - 1
        code = given[a + 1 :].astype(np.intp)
        code += given[a].astype(np.intp) * (k + 1)
        code += (np.arange(rows, dtype=np.intp) * cells)[:, None]
        both = np.bincount(code.ravel(), minlength=rows * cells).reshape(rows, k + 1, k + 1)
        tally[a, a + 1 :] = both[:, 1:, 1:].reshape(rows, k * k)
    return tally.ravel()


def _tally_by_gram(
    table: GroupTable, carry: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The same counts as ``_tally_by_rater_pairs`` from G = Z'Z, Z (items, R K) one-hot:
    G[(a, c), (b, d)] counts the items where a gave c and b gave d (exact in float64); and
    Z' carry (R K, F) for per-item rows ``carry`` (N, F), in the same pass."""
    n_raters, k = table.rater_counts.shape
    columns = n_raters * k
    gram = np.zeros((columns, columns))
    carried = None if carry is None else np.zeros((columns, carry.shape[1]))
    for low, high, onehot in onehot_blocks(table, GRAM_BLOCK_CELLS):
        gram += onehot.T @ onehot
        if carried is not None and carry is not None:
            carried += onehot.T @ carry[low:high]
    by_pair = gram.reshape(n_raters, k, n_raters, k).transpose(0, 2, 1, 3)
    tally = np.zeros((n_raters, n_raters, k * k), dtype=np.int64)
    later = np.triu(np.ones((n_raters, n_raters), dtype=bool), 1)  # pairs a < b
    tally[later] = np.rint(by_pair[later]).astype(np.int64).reshape(-1, k * k)
    return tally.ravel(), carried


def _tally_by_label_pairs(table: GroupTable) -> tuple[np.ndarray, np.ndarray]:
    """Nonzero confusion cells and their counts from the within-item label pairs (any R)."""
    n_raters, k = table.rater_counts.shape
    size = n_raters * n_raters * k * k
    dense = size <= _MAX_DENSE_CODES
    tally = np.zeros(size if dense else 0, dtype=np.int64)
    codes_seen: list[np.ndarray] = []
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        # labels are sorted by rater within an item, so rater[i] < rater[j]
        code = (table.label_rater[i] * n_raters + table.label_rater[j]) * (k * k) + (
            table.label_category[i] * k + table.label_category[j]
        )
        if dense:
            tally += np.bincount(code, minlength=size)
        else:
            codes_seen.append(code)
    if dense:
        cells = np.flatnonzero(tally)
        return cells, tally[cells]
    joined = np.concatenate(codes_seen) if codes_seen else np.zeros(0, dtype=np.int64)
    return np.unique(joined, return_counts=True)


def pairwise_cohen(
    table: GroupTable, by_rater_pairs: bool | None = None, carry: np.ndarray | None = None
) -> PairwiseCohen:
    """Confusion tables of all rater pairs that share at least one item, and their kappas.

    ``by_rater_pairs`` picks the counting method (None: the cheaper one for this table).
    ``carry`` (N, F): per-item rows summed per (rater, category) of the labels when the Gram
    path runs (``PairwiseCohen.carried``; the raters' confusion against the others reads it).
    """
    n_raters, k = table.rater_counts.shape
    if by_rater_pairs is None:
        label_pairs = int((table.m * (table.m - 1) // 2).sum())
        rater_pairs = n_raters * (n_raters - 1) // 2
        by_rater_pairs = (
            rater_pairs * table.n_pairable <= 2 * label_pairs
            and n_raters * table.n_pairable <= 1 << 27
            and k <= 255
        )
    if by_rater_pairs:
        if n_raters * k <= GRAM_MAX_COLUMNS:
            tally, carried = _tally_by_gram(table, carry)
            return dataclasses.replace(_kappas(tally, n_raters, k), carried=carried)
        return _kappas(_tally_by_rater_pairs(table), n_raters, k)
    cells, counts = _tally_by_label_pairs(table)
    return _from_cells(cells, counts, n_raters, k)


def _kappas(tally: np.ndarray, n_raters: int, k: int) -> PairwiseCohen:
    cells = np.flatnonzero(tally)
    return _from_cells(cells, tally[cells], n_raters, k)


def _from_cells(cells: np.ndarray, cell_counts: np.ndarray, n_raters: int, k: int) -> PairwiseCohen:
    """Kappas from the nonzero confusion cells, coded ((a * R + b) * K + c_a) * K + c_b."""
    pair_code, pair_index = np.unique(cells // (k * k), return_inverse=True)
    confusion: np.ndarray = np.zeros((pair_code.shape[0], k * k))
    confusion[pair_index, cells % (k * k)] = cell_counts
    confusion = confusion.reshape(-1, k, k)
    return PairwiseCohen(
        rater_a=pair_code // n_raters,
        rater_b=pair_code % n_raters,
        n_items=confusion.sum(axis=(1, 2)).astype(np.int64),
        kappa=kappa_of(confusion),
        confusion=confusion,
    )


def kappa_of(confusion: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Cohen's kappa of confusion tables (..., K, K) -> (...), NaN where undefined; with
    agreement ``weights`` w (K, K), Cohen's (1968) weighted kappa: po = sum w o / n,
    pe = sum_{c,k} w_ck a_c b_k / n^2 (Ao^w and Ae^w of docs/measures.md, "Ordinal scales")."""
    n = confusion.sum(axis=(-2, -1))
    rows, columns = confusion.sum(axis=-1), confusion.sum(axis=-2)
    if weights is None:
        agreeing = np.trace(confusion, axis1=-2, axis2=-1)
        expected = (rows * columns).sum(axis=-1)
    else:
        agreeing = np.einsum("...ck,ck->...", confusion, weights)
        expected = np.einsum("...c,ck,...k->...", rows, weights, columns)
    observed = safe_ratio(agreeing, n)
    chance = safe_ratio(expected, n**2)
    return safe_ratio(observed - chance, 1.0 - chance)


def jackknife_intervals(
    confusion: np.ndarray, level: float, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Delete-one-shared-item jackknife of every pair's kappa, (P, K, K) -> (low, high) (P,).

    Deleting an item only removes one count from the cell (c_a, c_b) it falls in, so the
    delete-one values take at most K^2 distinct values per pair, each weighted by its count:
    O(P K^4) in all, whatever the number of items. NaN where undefined or n < 2.
    """
    p, k, _ = confusion.shape
    n = confusion.sum(axis=(1, 2))
    kappa = kappa_of(confusion, weights)
    eye = np.eye(k * k).reshape(k * k, k, k)
    without = kappa_of(confusion[:, None, :, :] - eye[None, :, :, :], weights)  # (P, K*K)
    weight = confusion.reshape(p, k * k)
    present = weight > 0
    ok = (n >= 2) & np.isfinite(kappa) & np.where(present, np.isfinite(without), True).all(axis=1)
    values = np.where(present, np.nan_to_num(without), 0.0)
    mean = (weight * values).sum(axis=1) / np.maximum(n, 1)
    spread = (weight * (values - mean[:, None]) ** 2).sum(axis=1)
    se = np.sqrt((n - 1) / np.maximum(n, 1) * spread)
    # zero spread from a handful of shared items says nothing about the spread: no interval
    ok &= ~((se <= 1e-12) & (n < MIN_ITEMS_FOR_ZERO_SPREAD))
    half = z_value(level) * se
    high = np.minimum(kappa + half, UPPER_BOUND)
    return np.where(ok, kappa - half, np.nan), np.where(ok, high, np.nan)


def bootstrap_intervals(
    confusion: np.ndarray,
    level: float,
    rng: np.random.Generator,
    resamples: int,
    weightings: tuple[np.ndarray | None, ...] = (None,),
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Percentile bootstrap over each pair's shared items, (P, K, K) -> (low, high) (P,) per
    entry of ``weightings`` (None: Cohen's kappa; a (K, K) matrix: the weighted kappa), all
    from the same resamples.

    Redrawing a pair's n shared items with replacement makes its confusion table multinomial
    with the observed cell shares, so each resample is one multinomial draw of K^2 cells;
    pairs are drawn in chunks, all at once. NaN where n < 2 or mostly undefined.
    """
    p, k, _ = confusion.shape
    out = [(np.full(p, np.nan), np.full(p, np.nan)) for _ in weightings]
    n = confusion.sum(axis=(1, 2))
    usable = np.flatnonzero(n >= 2)
    chunk = max(1, (1 << 22) // max(1, resamples * k * k))
    tail = (1.0 - level) / 2.0
    for start in range(0, usable.shape[0], chunk):  # chunks of pairs bound the memory
        pairs = usable[start : start + chunk]
        shares = confusion[pairs].reshape(pairs.shape[0], k * k) / n[pairs][:, None]
        tables = rng.multinomial(
            n[pairs].astype(np.int64), shares, size=(resamples, pairs.shape[0])
        )
        tables = tables.reshape(resamples, pairs.shape[0], k, k).astype(float)
        for (low, high), weights in zip(out, weightings, strict=True):  # one or two
            replicates = kappa_of(tables, weights)
            finite = np.isfinite(replicates).sum(axis=0)
            enough = finite >= max(10, resamples // 2)
            if enough.any():
                ordered = np.sort(replicates[:, enough], axis=0)  # NaN sort last
                low[pairs[enough]] = _column_quantile(ordered, finite[enough], tail)
                high[pairs[enough]] = _column_quantile(ordered, finite[enough], 1.0 - tail)
    return out


def _column_quantile(ordered: np.ndarray, count: np.ndarray, q: float) -> np.ndarray:
    """Linear-interpolation quantile (NumPy's default) of the first ``count`` values of each
    column of ``ordered`` (B, P), sorted ascending; all columns at once."""
    position = q * (count - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, count - 1)
    columns = np.arange(ordered.shape[1])
    low, high = ordered[below, columns], ordered[above, columns]
    result: np.ndarray = low + (high - low) * (position - below)
    return result
