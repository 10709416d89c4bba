"""Can two rows of a label file be equal? Fast answers for the natural-identity checks.

An exact check sorts the rows on every column (``np.lexsort``: 90 ms for a million rows of
two keys). Here each row is first hashed to one 64-bit word, and the words are sorted with
NumPy's vectorised sort (7 ms): equal rows have equal words, so distinct words prove distinct
rows. Only when two words are equal (two equal rows, or, about once in 10^7 files of a million
rows, two different ones) must the caller run the exact check.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Odd 64-bit multipliers (the golden ratio's and splitmix64's): they spread every input bit.
_STEP = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


def row_hashes(columns: Sequence[np.ndarray]) -> np.ndarray:
    """One uint64 per row of the integer ``columns`` (equal length); equal rows hash equal."""
    hashed = np.zeros(len(columns[0]), dtype=np.uint64)
    for column in columns:
        # int64 is read as uint64 in place (a view: no copy of the column)
        hashed ^= column.view(np.uint64) if column.dtype == np.int64 else column.astype(np.uint64)
        hashed *= _STEP  # wraps modulo 2**64, as a hash should
        hashed ^= hashed >> np.uint64(31)
    hashed *= _MIX
    hashed ^= hashed >> np.uint64(29)
    return hashed


def any_equal(hashes: np.ndarray) -> bool:
    """Does a value occur twice? ``hashes`` is sorted in place (no second copy is held)."""
    hashes.sort()
    return bool((hashes[1:] == hashes[:-1]).any())


def surely_distinct(columns: Sequence[np.ndarray]) -> bool:
    """True when no two rows of ``columns`` are equal, proven by their hashes; False when
    some may be (then check exactly)."""
    return len(columns[0]) < 2 or not any_equal(row_hashes(columns))
