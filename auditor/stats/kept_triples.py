"""Sparse rater-triple weights for S against the group (``kept``, docs/architecture.md "Kept
statistics").

A rater p's chance term against the others on her items u (m_u >= 3) is
``sum_u w_u sum_{q != r in R_u \\ {p}} v_qc v_rc`` with w_u = 1 / ((m_u - 1)(m_u - 2)) and v
the group's rater biases, which move with every label: the per-item part that does not move is
``T_pqr = sum_{u: p, q, r in R_u} w_u``. T is kept sparse, on the triples a < b < c that
labeled a common item, as one key array (a << 42 | b << 21 | c, shared by the groups) and a
weight per group: (G, T). Keys do not depend on the number of raters, so adding raters leaves
them alone; 2**21 rater slots is the ceiling.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

SHIFT = 21
MAX_SLOTS = 1 << SHIFT
# A triple whose weight is below this in every group is dropped: a real weight is a sum of
# 1 / ((m-1)(m-2)) >= 1e-9 for m <= 30,000 labels on an item; what an update leaves after
# subtracting a contribution is a rounding residue of ~1e-16 times the group's total.
ZERO = 1e-10


def encode(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Keys of the triples (a, b, c), a < b < c, int64."""
    key: np.ndarray = (a.astype(np.int64) << (2 * SHIFT)) | (b.astype(np.int64) << SHIFT) | c
    return key


def decode(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mask = np.int64(MAX_SLOTS - 1)
    return key >> (2 * SHIFT), (key >> SHIFT) & mask, key & mask


def within_item_triples(
    label_item: np.ndarray, starts: np.ndarray, m: np.ndarray, max_triples: int = 1 << 20
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(i, j, l) label positions, i < j < l, of every triple of labels on one item, in chunks of
    about ``max_triples`` (the loop is over chunks; an item of m labels gives C(m, 3))."""
    n_labels = label_item.shape[0]
    if n_labels == 0:
        return
    end = (starts + m)[label_item]  # one past the item's last label, per label
    position = np.arange(n_labels, dtype=np.int64)
    # per label i: triples starting at i = C(end - 1 - i, 2)
    after = end - 1 - position
    count = after * (after - 1) // 2
    total = np.cumsum(count)
    low = 0
    while low < n_labels:
        done = int(total[low - 1]) if low else 0
        high = int(np.searchsorted(total, done + max_triples, side="right"))
        high = max(high, low + 1)
        # pairs (i, j), j > i, of the chunk's first labels, then l > j
        later = after[low:high]
        n_pairs = int(later.sum())
        if n_pairs:
            first = np.repeat(position[low:high], later)
            offset = np.arange(n_pairs, dtype=np.int64) - np.repeat(np.cumsum(later) - later, later)
            second = first + offset + 1
            rest = end[second] - 1 - second
            n_triples = int(rest.sum())
            if n_triples:
                i = np.repeat(first, rest)
                j = np.repeat(second, rest)
                step = np.arange(n_triples, dtype=np.int64) - np.repeat(
                    np.cumsum(rest) - rest, rest
                )
                yield i, j, j + step + 1
        low = high


def reduce(
    keys: np.ndarray, group: np.ndarray, weights: np.ndarray, groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sum ``weights`` by (key, group): (unique keys (T,), weights (G, T))."""
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.bincount(
        group * unique.shape[0] + inverse.ravel(),
        weights=weights,
        minlength=groups * unique.shape[0],
    )
    return unique, summed.reshape(groups, unique.shape[0])


def align(
    parts: list[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The union of the parts' keys and each part's weights (G_i, T_i, ...) on it (G_i, T, ...)."""
    if len(parts) == 1:
        return parts[0][0], [parts[0][1]]
    union = np.unique(np.concatenate([keys for keys, _ in parts]))
    out = []
    for keys, weights in parts:  # bounded by the parts (two, or the groups)
        full = np.zeros((weights.shape[0], union.shape[0], *weights.shape[2:]))
        full[:, np.searchsorted(union, keys)] = weights
        out.append(full)
    return union, out


def pruned(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Without the keys whose weight is zero (below ``ZERO``) in every group (and cell, for
    weights (G, T, ...) with cells after the key axis)."""
    if keys.shape[0] == 0:
        return keys, weights
    cells = np.abs(weights) > ZERO
    keep = cells.reshape(weights.shape[0], weights.shape[1], -1).any(axis=(0, 2))
    if keep.all():
        return keys, weights
    return keys[keep], weights[:, keep]


def renumbered(
    keys: np.ndarray, weights: np.ndarray, new_slot: np.ndarray, sorted_from: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The triples with slot s renamed ``new_slot[s]`` (a permutation; -1 drops the triple);
    the members from ``sorted_from`` on are kept in ascending order (1: a model's (t, p < q))."""
    a, b, c = (new_slot[x] for x in decode(keys))
    keep = (a >= 0) & (b >= 0) & (c >= 0)
    ordered = np.column_stack([a[keep], b[keep], c[keep]])
    ordered[:, sorted_from:] = np.sort(ordered[:, sorted_from:], axis=1)
    new_keys = encode(ordered[:, 0], ordered[:, 1], ordered[:, 2])
    order = np.argsort(new_keys)
    return new_keys[order], weights[:, keep][:, order]


def chance_terms(keys: np.ndarray, weights: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Per state s, rater p and category c: sum_{q != r, both != p} T_pqr v_qc v_rc, i.e.
    2 sum over kept triples holding p of T times the product of the other two's biases.

    weights : (S, T), or (1, T) for every state; bias : (S, R, K). Returns (S, R, K)."""
    n_states, r, k = bias.shape
    out = np.zeros((n_states, r, k))
    if keys.shape[0] == 0:
        return out
    a, b, c = decode(keys)
    columns = np.arange(k)
    for s in range(n_states):  # bounded by G + 1 states (the jackknife's)
        v = bias[s]
        w = 2.0 * weights[s if weights.shape[0] > 1 else 0][:, None]
        for me, one, two in ((a, b, c), (b, a, c), (c, a, b)):  # each member of the triple
            code = (me[:, None] * k + columns[None, :]).ravel()
            out[s] += np.bincount(
                code, weights=(w * v[one] * v[two]).ravel(), minlength=r * k
            ).reshape(r, k)
    return out


# Up to this many (a, b, c) cells a dense bincount sums the weights (16 MB); above it, sorting
# the keys (np.unique) does: with 10 raters a dense sum is ~20x cheaper than the sort.
DENSE_CELLS = 1 << 21


class Accumulator:
    """Sums weights by (a, b, c) slot triple over chunks; ``result`` gives the sparse keys
    (encoded) and weights (1, T). ``r``: slots, so codes stay below r^3."""

    def __init__(self, r: int) -> None:
        self.r = r
        self.dense = np.zeros(r**3) if r**3 <= DENSE_CELLS else None
        self.keys: list[np.ndarray] = []
        self.weights: list[np.ndarray] = []

    def add(self, a: np.ndarray, b: np.ndarray, c: np.ndarray, weights: np.ndarray) -> None:
        if self.dense is not None:
            code = (a * self.r + b) * self.r + c
            self.dense += np.bincount(code, weights=weights, minlength=self.dense.shape[0])
            return
        keys, summed = reduce(encode(a, b, c), np.zeros(a.shape[0], dtype=np.int64), weights, 1)
        self.keys.append(keys)
        self.weights.append(summed[0])

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        if self.dense is not None:
            code = np.flatnonzero(self.dense)
            a, rest = np.divmod(code, self.r * self.r)
            b, c = np.divmod(rest, self.r)
            return encode(a, b, c), self.dense[code][None, :]
        if not self.keys:
            return np.zeros(0, dtype=np.int64), np.zeros((1, 0))
        joined = np.concatenate(self.keys)
        return reduce(
            joined, np.zeros(joined.shape[0], dtype=np.int64), np.concatenate(self.weights), 1
        )


def sorted3(
    a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three columns sorted per row (low, middle, high), without a (n, 3) sort."""
    low = np.minimum(np.minimum(a, b), c)
    high = np.maximum(np.maximum(a, b), c)
    return low, a + b + c - low - high, high
