"""The few pyarrow compute functions the CSV path calls, by name.

Importing ``pyarrow.compute`` builds a Python wrapper, with a docstring scraped from its
options class, for each of its ~300 functions: 20 ms, 3% of a one-shot ``auditor stats`` on a
million labels. ``call_function``, which that module re-exports from its C core, runs the
same kernels without them. Array methods such as ``cast`` and ``take`` import the module, so
the CSV path calls these instead.
"""

from __future__ import annotations

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
