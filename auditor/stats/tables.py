"""Reshaping long label arrays into what the measures read; no statistic is computed here.

Three views of one project (docs/measures.md, "What the measures see"):

* ``Cells``: one label per (item, rater) chosen by the collapse policy, plus the category
  counts of every cell labeled more than once (repeated presentations).
* ``GroupTable``: the human group on its pairable items (m_u >= 2): per-item counts c_uc and
  the group's labels sorted by item, the input of every inter-rater measure.
* ``within_item_pairs``: the unordered pairs of group labels that share an item, in chunks.

Everything is vectorised: sorting, ``bincount`` and fancy indexing; no loop over labels or items.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from auditor.domain import CollapsePolicy, LabelArrays

# Above this many (item, rater) slots per label the dense cell index would waste memory, so
# cells are numbered by sorting the keys instead.
_DENSE_SLOTS_PER_LABEL = 4
# Largest dense (items x raters) presence matrix the group table will build (float64 cells).
MAX_PRESENCE_CELLS = 1 << 25
# ... and at most this many cells per group label.
PRESENCE_OCCUPANCY = 4


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def validate(labels: LabelArrays) -> None:
    """Raise ``ValueError`` naming the field and the first offending row of invalid input."""
    k = labels.n_categories
    if k < 2:
        raise ValueError(f"at least 2 categories are needed, got {k}")
    n = labels.item.shape[0]
    for name in ("item", "rater", "category", "order"):
        arr = getattr(labels, name)
        if not isinstance(arr, np.ndarray) or arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D numpy array")
        if arr.shape[0] != n:
            raise ValueError(f"{name} has {arr.shape[0]} rows, item has {n}: lengths must match")
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must have an integer dtype, got {arr.dtype}")
    if labels.rater_is_model.ndim != 1 or labels.rater_is_model.dtype != np.bool_:
        raise ValueError("rater_is_model must be a 1-D bool array")
    n_raters = labels.n_raters
    if labels.rater_names and len(labels.rater_names) != n_raters:
        raise ValueError(f"rater_names has {len(labels.rater_names)} names for {n_raters} raters")
    if labels.label_ids is not None and labels.label_ids.shape != (n,):
        raise ValueError(f"label_ids must have shape ({n},)")
    if n == 0:
        return
    bounds = (
        ("item", labels.item, len(labels.item_names) if labels.item_names else None),
        ("rater", labels.rater, n_raters),
        ("category", labels.category, k),
    )
    for name, arr, upper in bounds:
        if arr.min() < 0:
            row = _first_bad(arr < 0)
            raise ValueError(f"{name} index must be >= 0: row {row} has {int(arr[row])}")
        if upper is not None and arr.max() >= upper:
            row = _first_bad(arr >= upper)
            raise ValueError(
                f"{name} index out of range [0, {upper}): row {row} has {int(arr[row])}"
            )


@dataclass(frozen=True)
class Cells:
    """One label per (item, rater) cell, sorted by (item, rater).

    item, rater, category : int64 arrays, shape (n_cells,); the collapsed view.
    repeat_cell : int64 array, shape (n_repeated,); positions in the arrays above of the cells
        labeled at least twice (ascending).
    repeat_counts : int64 array, shape (n_repeated, K); category counts of those cells.
    """

    item: np.ndarray
    rater: np.ndarray
    category: np.ndarray
    repeat_cell: np.ndarray
    repeat_counts: np.ndarray
    n_items: int
    n_raters: int
    n_categories: int


def _choose(
    policy: CollapsePolicy, cats: np.ndarray, gid: np.ndarray, starts: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pick one category per repeated cell from labels sorted by (cell, order, row).

    cats, gid : shape (n_dup,), the category and the cell number of each label.
    starts : shape (n_cells,), first position of each cell.
    Returns the chosen categories (n_cells,) and the category counts (n_cells, k).
    """
    g = starts.shape[0]
    counts = np.bincount(gid * k + cats, minlength=g * k).reshape(g, k)
    if policy == CollapsePolicy.FIRST:
        return cats[starts], counts
    if policy == CollapsePolicy.LATEST:
        ends = np.append(starts[1:], cats.shape[0]) - 1
        return cats[ends], counts
    # mode: the most frequent category; a tie goes to the category seen earliest.
    codes = gid * k + cats
    _, first_index = np.unique(codes, return_index=True)
    first_seen = np.full(g * k, np.iinfo(np.int64).max, dtype=np.int64)
    first_seen[codes[first_index]] = first_index
    first_seen = first_seen.reshape(g, k)
    first_seen[counts < counts.max(axis=1, keepdims=True)] = np.iinfo(np.int64).max
    return first_seen.argmin(axis=1), counts


def collapse(labels: LabelArrays, policy: CollapsePolicy = CollapsePolicy.FIRST) -> Cells:
    """Group labels by (item, rater) and keep one per cell by ``policy``
    (docs/measures.md, "What the measures see").

    ``first`` takes the earliest ``order`` (ties: the earlier row, i.e. the lower label id),
    ``latest`` the latest (ties: the later row), ``mode`` the most frequent category with ties
    to the category whose first label came earliest. Only repeated cells are sorted, so the
    cost is O(n_labels) plus a sort of the repeated labels.
    """
    validate(labels)
    k = labels.n_categories
    n_raters = labels.n_raters
    n_items = labels.n_items
    key = labels.item.astype(np.int64, copy=False) * n_raters
    key += labels.rater
    slots = n_items * n_raters
    dense = slots <= _DENSE_SLOTS_PER_LABEL * key.shape[0] + 1024
    if dense:
        cell = key
        keys = None
    else:
        keys, cell = np.unique(key, return_inverse=True)
        slots = keys.shape[0]
    per_cell = np.bincount(cell, minlength=slots)
    # the smallest signed type that holds the categories keeps the random writes in cache
    chosen = np.full(slots, -1, dtype=np.int8 if k <= 127 else np.int32)
    chosen[cell] = labels.category  # right for every single-label cell; repeats fixed below
    repeated = per_cell > 1
    dup_rows = np.flatnonzero(repeated[cell]) if repeated.any() else np.zeros(0, np.int64)
    del repeated
    if dup_rows.size:
        dup_cell = cell[dup_rows]
        sort = np.lexsort((dup_rows, labels.order[dup_rows], dup_cell))
        dup_rows, dup_cell = dup_rows[sort], dup_cell[sort]
        boundary = np.empty(dup_cell.shape[0], dtype=bool)
        boundary[0] = True
        np.not_equal(dup_cell[1:], dup_cell[:-1], out=boundary[1:])
        starts = np.flatnonzero(boundary)
        gid = np.cumsum(boundary) - 1
        picked, repeat_counts = _choose(
            policy, labels.category[dup_rows].astype(np.int64), gid, starts, k
        )
        repeat_slots = dup_cell[starts]
        chosen[repeat_slots] = picked
    else:
        repeat_slots = np.zeros(0, dtype=np.int64)
        repeat_counts = np.zeros((0, k), dtype=np.int64)
    del key, cell  # free the per-label index before the per-cell outputs are built
    every = keys is None and bool(per_cell.all())  # every rater labeled every item
    if every:  # the cells are the whole (item, rater) grid, in order: cell = slot
        del per_cell
        item = np.repeat(np.arange(n_items, dtype=np.int64), n_raters)
        rater = np.tile(np.arange(n_raters, dtype=np.int64), n_items)
        category = chosen.astype(np.int64)
        repeat_cell = repeat_slots.astype(np.int64)
    else:
        present = np.flatnonzero(per_cell) if keys is None else np.arange(slots)
        del per_cell
        cell_key = present if keys is None else keys
        item = cell_key // n_raters  # a division by a scalar is faster than divmod
        rater = cell_key - item * n_raters
        category = chosen[present].astype(np.int64)
        repeat_cell = np.searchsorted(present, repeat_slots)
    return Cells(
        item=item,
        rater=rater,
        category=category,
        repeat_cell=repeat_cell,
        repeat_counts=repeat_counts,
        n_items=n_items,
        n_raters=n_raters,
        n_categories=k,
    )


@dataclass(frozen=True)
class GroupTable:
    """The human group on its pairable items.

    items : int64, shape (N,); project index of each pairable item (ascending).
    m : int64, shape (N,); m_u, group raters who labeled the item (>= 2).
    counts : int64, shape (N, K); c_uc.
    label_item, label_rater, label_category : int64, shape (L,); the group's collapsed labels
        on pairable items, sorted by (item, rater); ``label_item`` is the position in ``items``.
    starts : int64, shape (N,); first label position of each item.
    rater_counts : int64, shape (R, K); a_pc, pairable items rater p gave category c.
    single_counts : int64, shape (K,); category counts of the items with a single group label
        (not pairable: only Gwet's pi_c counts them).
    """

    items: np.ndarray
    m: np.ndarray
    counts: np.ndarray
    label_item: np.ndarray
    label_rater: np.ndarray
    label_category: np.ndarray
    starts: np.ndarray
    rater_counts: np.ndarray
    single_counts: np.ndarray

    @property
    def n_pairable(self) -> int:
        return int(self.items.shape[0])

    @property
    def n_per_rater(self) -> np.ndarray:
        """n_p, shape (R,): pairable items rated by each rater."""
        result: np.ndarray = self.rater_counts.sum(axis=1)
        return result

    def rater_bias(self) -> np.ndarray:
        """v_pc = a_pc / n_p, shape (R, K); zero rows for raters without pairable items."""
        n_p = self.n_per_rater
        result: np.ndarray = self.rater_counts / np.maximum(n_p, 1)[:, None]
        return result

    @cached_property
    def label_code(self) -> np.ndarray:
        """item * K + category of each label, shape (L,): the flat index into (N, K) tables."""
        result: np.ndarray = self.label_item * self.counts.shape[1] + self.label_category
        return result

    @cached_property
    def presence(self) -> np.ndarray | None:
        """Dense 0/1 matrix (N, R) of which raters labeled each item, or None when too large.

        With few raters, sums over the raters of an item become one matrix product.
        """
        n_raters = self.rater_counts.shape[0]
        cells = self.n_pairable * n_raters
        # bounded in size, and only where items carry a fair share of the raters: with many
        # raters and few labels per item a dense matrix would be mostly zeros
        if cells > MAX_PRESENCE_CELLS or cells > PRESENCE_OCCUPANCY * self.label_item.shape[0]:
            return None
        if cells == self.label_item.shape[0]:  # one label per (item, rater): all present
            return np.ones((self.n_pairable, n_raters))
        dense = np.zeros(self.n_pairable * n_raters)
        dense[self.label_item * n_raters + self.label_rater] = 1.0
        return dense.reshape(self.n_pairable, n_raters)

    def sum_over_raters(self, per_rater: np.ndarray) -> np.ndarray:
        """For each item, the sum over its raters of ``per_rater`` (R, F) -> (N, F)."""
        if self.presence is not None:
            result: np.ndarray = self.presence @ per_rater
            return result
        out = np.empty((self.n_pairable, per_rater.shape[1]))
        for f in range(per_rater.shape[1]):  # bounded by the number of columns
            out[:, f] = np.bincount(
                self.label_item, weights=per_rater[self.label_rater, f], minlength=self.n_pairable
            )
        return out

    def sum_over_items(self, per_item: np.ndarray) -> np.ndarray:
        """For each rater, the sum over its items of ``per_item`` (N, F) -> (R, F)."""
        n_raters = self.rater_counts.shape[0]
        if self.presence is not None:
            result: np.ndarray = self.presence.T @ per_item
            return result
        out = np.empty((n_raters, per_item.shape[1]))
        for f in range(per_item.shape[1]):  # bounded by the number of columns
            out[:, f] = np.bincount(
                self.label_rater, weights=per_item[self.label_item, f], minlength=n_raters
            )
        return out


def group_table(cells: Cells, rater_is_model: np.ndarray) -> GroupTable:
    """Restrict ``cells`` to human raters and keep the items at least two of them labeled."""
    k = cells.n_categories
    if rater_is_model.any():
        human_cell = np.flatnonzero(~rater_is_model[cells.rater])
        item = cells.item[human_cell]
    else:  # no model rater: skip the copies
        human_cell = None
        item = cells.item
    m_all = np.bincount(item, minlength=cells.n_items)
    pairable = m_all >= 2
    labeled = m_all > 0
    every_pairable = bool((pairable | ~labeled).all())  # no label on an unpairable item
    if every_pairable:
        single_counts = np.zeros(k, dtype=np.int64)
    else:
        group_category = cells.category if human_cell is None else cells.category[human_cell]
        single_counts = np.bincount(group_category[m_all[item] == 1], minlength=k)
        del group_category
    if human_cell is None and every_pairable and labeled.all():
        # every cell is a group label on a pairable item and no item is empty (the usual
        # large case): the table shares the cells' arrays instead of copying them
        label_item, label_rater, label_category = cells.item, cells.rater, cells.category
    else:
        if every_pairable:
            label_cell = np.arange(item.shape[0]) if human_cell is None else human_cell
        else:
            keep = pairable[item]
            label_cell = np.flatnonzero(keep) if human_cell is None else human_cell[keep]
        position = np.cumsum(pairable) - 1
        label_item = position[cells.item[label_cell]]
        label_rater = cells.rater[label_cell]
        label_category = cells.category[label_cell]
    items = np.flatnonzero(pairable)
    n = items.shape[0]
    m = m_all[items]
    code = label_item * k
    code += label_category
    counts = np.bincount(code, minlength=n * k).reshape(n, k)
    by_rater = label_rater * k
    by_rater += label_category
    rater_counts = np.bincount(by_rater, minlength=cells.n_raters * k).reshape(cells.n_raters, k)
    del by_rater
    starts = np.cumsum(m) - m
    table = GroupTable(
        items=items,
        m=m,
        counts=counts,
        label_item=label_item,
        label_rater=label_rater,
        label_category=label_category,
        starts=starts,
        rater_counts=rater_counts,
        single_counts=single_counts,
    )
    # the counts' flat (item, category) index is the table's ``label_code``: computed once
    table.__dict__["label_code"] = code
    return table


def within_item_pairs(
    label_item: np.ndarray, starts: np.ndarray, m: np.ndarray, max_pairs: int = 1 << 22
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (i, j) label positions, i < j, of every unordered pair of labels on one item.

    label_item : shape (L,), sorted; starts, m : shape (N,). Pairs come in chunks of about
    ``max_pairs`` so memory stays bounded; the loop is over chunks, not items.
    """
    n_labels = label_item.shape[0]
    if n_labels == 0:
        return
    position = np.arange(n_labels, dtype=np.int64)
    later = (starts + m)[label_item] - 1 - position
    total = np.cumsum(later)
    low = 0
    while low < n_labels:
        done = total[low - 1] if low else 0
        high = int(np.searchsorted(total, done + max_pairs, side="right"))
        high = max(high, low + 1)
        count = later[low:high]
        n_pairs = int(count.sum())
        if n_pairs:
            first = np.repeat(position[low:high], count)
            offset = np.arange(n_pairs, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
            yield first, first + offset + 1
        low = high


def onehot_blocks(table: GroupTable, block_cells: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """(low, high, Z) over blocks of pairable items [low, high): Z (high - low, R K) holds 1 at
    (item, rater * K + category) of each group label. Blocks of about ``block_cells`` cells stay
    in cache; sums over items then become BLAS products per block (pairwise Cohen's Gram
    matrix, the bias index's jackknife)."""
    n_raters, k = table.rater_counts.shape
    columns = n_raters * k
    n = table.n_pairable
    step = max(1, block_cells // max(1, columns))  # no column: a scope with no rater
    code = table.label_rater * k + table.label_category
    for low in range(0, n, step):  # blocks bound memory; not a loop per item
        high = min(n, low + step)
        first = int(table.starts[low])
        last = int(table.starts[high]) if high < n else code.shape[0]
        onehot = np.zeros((high - low) * columns)
        onehot[(table.label_item[first:last] - low) * columns + code[first:last]] = 1.0
        yield low, high, onehot.reshape(high - low, columns)
