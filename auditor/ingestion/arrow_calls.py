"""The few pyarrow compute functions the CSV path calls, by name, and arrays between pyarrow
and NumPy without pandas.

Importing ``pyarrow.compute`` builds a Python wrapper, with a docstring scraped from its
options class, for each of its ~300 functions: 20 ms, 3% of a one-shot ``auditor stats`` on a
million labels. ``call_function``, which that module re-exports from its C core, runs the
same kernels without them. Array methods such as ``cast`` and ``take`` import the module, so
the CSV path calls these instead.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

try:
    from pyarrow._compute import CastOptions, MatchSubstringOptions, call_function
except ImportError:  # a pyarrow that moved its core: the public names, at their import cost
    from pyarrow.compute import CastOptions, MatchSubstringOptions, call_function


def call(name: str, *arguments: pa.Array) -> pa.Array:
    """The compute function ``name`` on ``arguments`` (no options)."""
    return call_function(name, list(arguments))


def cast(array: pa.Array, to: pa.DataType) -> pa.Array:
    """``array.cast(to)``, checked (a value that does not fit raises ``ArrowInvalid``)."""
    return call_function("cast", [array], CastOptions.safe(to))


def take(array: pa.Array, indices: pa.Array) -> pa.Array:
    """``array.take(indices)``."""
    return call_function("take", [array, indices])


def matches(array: pa.Array, pattern: str) -> pa.Array:
    """Which values hold a match of the RE2 ``pattern``."""
    return call_function("match_substring_regex", [array], MatchSubstringOptions(pattern))


def as_numpy(array: pa.Array) -> np.ndarray:
    """An integer or boolean array without nulls as NumPy, read from its buffers. pyarrow's
    ``to_numpy`` imports pandas on first use (0.15 s of a one-shot ``auditor stats``)."""
    if array.null_count or not (pa.types.is_integer(array.type) or pa.types.is_boolean(array.type)):
        return np.asarray(array.to_numpy(zero_copy_only=False))
    n, offset, data = len(array), array.offset, array.buffers()[1]
    if pa.types.is_boolean(array.type):
        if n == 0:
            return np.zeros(0, dtype=bool)
        bits = np.frombuffer(data, dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little")[offset : offset + n].astype(bool)
    signed = pa.types.is_signed_integer(array.type)
    dtype = np.dtype(f"{'i' if signed else 'u'}{array.type.bit_width // 8}")
    return np.frombuffer(data, dtype=dtype)[offset : offset + n] if n else np.zeros(0, dtype)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A boolean or int64 pyarrow array of a NumPy array, made from buffers (``pa.array`` of
    a NumPy array imports pandas on first use)."""
    if values.dtype == bool:
        bits = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, bits])
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])
