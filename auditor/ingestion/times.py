"""labeled_at of a column-wise batch: microseconds since the epoch, checked per column.

The common shapes (``YYYY-MM-DDTHH:MM:SSZ``, 20 characters, and the same with a fraction of 1-6
digits, ``...SS.ffffffZ``, 22-27 characters, as exports that keep milli- or microseconds write
them), one width in a column, are parsed in C by pyarrow's ISO 8601 cast, which refuses an
impossible date or time (February 30, 24:00, 23:59:60) for the whole column; the separators,
the fraction's digits and the time bounds are checked in NumPy. A 20-character column the cast
refuses is parsed from its bytes in NumPy, row by row in vector form, so each bad row is found;
any row in another shape (an offset, mixed widths) or bad, and a column with fractions that
the cast refuses, go through the Python parser of ``auditor.ingestion.batch``, which names
each bad row with the message the Python path gives. (Fractions through the Python parser: 8 s
of a 1M-row import's 56 s at load 6, issue 22 item 6.)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from auditor.domain import EARLIEST_MICROS, LATEST_MICROS
from auditor.ingestion.arrow_calls import as_numpy, cast, from_numpy, take
from auditor.ingestion.batch import _timestamp
from auditor.ingestion.errors import RowError

# RE2 syntax; the shape batch._PLAIN_UTC matches.
_PLAIN_UTC = r"^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$"
_UTC_MICROS = pa.timestamp("us", tz="UTC")


def labeled_at_column(
    column: pa.ChunkedArray, lines: np.ndarray, errors: list[RowError]
) -> tuple[list[int | None] | None, np.ndarray]:
    """labeled_at as an array of microseconds with -1 where empty, and as a list with None
    there when some row is empty or not in the common shape (else None: the array says all)."""
    array = column.combine_chunks()
    fixed = _fixed_width_utc(array)
    if fixed is not None:
        micros, good = fixed
        return _with_fallback(array, micros, good, lines, errors)
    import pyarrow.compute as pc  # another shape than the common one: rare, and slow anyway

    plain = as_numpy(pc.and_kleene(pc.match_substring_regex(array, _PLAIN_UTC), pc.is_valid(array)))
    parsed = pc.strptime(array, format="%Y-%m-%dT%H:%M:%SZ", unit="us", error_is_null=True)
    micros = parsed.cast(pa.int64()).fill_null(-1).to_numpy(zero_copy_only=False).copy()
    # strptime rolls an impossible date over (February 30 -> March 1): a time is taken only
    # when its month and day are the ones written (strftime back would say so too, 20x slower).
    same_text = plain.copy()
    if plain.any():
        shape = from_numpy(plain)
        for start, component in ((5, pc.month), (8, pc.day)):
            written = pc.if_else(shape, pc.utf8_slice_codeunits(array, start, start + 2), "0")
            read = component(parsed).fill_null(-1).to_numpy(zero_copy_only=False)
            same_text &= written.cast(pa.int64()).to_numpy(zero_copy_only=False) == read
    good = same_text & (micros >= EARLIEST_MICROS) & (micros < LATEST_MICROS)
    return _with_fallback(array, micros, good, lines, errors)


def _with_fallback(
    array: pa.Array,
    micros: np.ndarray,
    good: np.ndarray,
    lines: np.ndarray,
    errors: list[RowError],
) -> tuple[list[int | None] | None, np.ndarray]:
    """Rows not ``good`` go through the Python parser: an empty value is None, another
    shape (an offset, fractions) is parsed, a bad one is named with the Python message."""
    if good.all():
        return None, micros
    values: np.ndarray = micros.astype(object)
    rest = np.flatnonzero(~good)
    texts = take(array, from_numpy(rest)).to_pylist()
    for position, text in zip(rest, texts, strict=True):
        value, message = _timestamp(text)
        if message is not None:
            errors.append(RowError(int(lines[position]), "labeled_at", message))
        values[position] = value
        micros[position] = -1 if value is None else value
    return values.tolist(), micros


_SEPARATORS = {4: ord("-"), 7: ord("-"), 10: ord("T"), 13: ord(":"), 16: ord(":"), 19: ord("Z")}
_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def _parse_fixed_width(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(microseconds, which rows are a valid ``YYYY-MM-DDTHH:MM:SSZ``) from the bytes of rows
    of 20 characters (``raw``: n x 20), in NumPy: each bad row found (about 10x pyarrow's regex
    and strptime)."""
    n = len(raw)
    # uint8 and int32 arithmetic, one column at a time: a (n, 14) int64 matrix cost 4x more.
    good = (raw[:, list(_SEPARATORS)] == np.array(list(_SEPARATORS.values()), np.uint8)).all(1)
    good &= ((raw[:, _DIGITS] - np.uint8(ord("0"))) <= 9).all(axis=1)

    def number(*columns: int) -> np.ndarray:
        value = np.zeros(n, dtype=np.int32)
        for column in columns:
            value = value * 10 + (raw[:, column].astype(np.int32) - ord("0"))
        return value

    year, month, day = number(0, 1, 2, 3), number(5, 6), number(8, 9)
    hour, minute, second = number(11, 12), number(14, 15), number(17, 18)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_days = _MONTH_DAYS[np.clip(month, 1, 12) - 1] + ((month == 2) & leap)
    good &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days)
    good &= (hour < 24) & (minute < 60) & (second < 60)
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, days_from_civil).
    shifted = year - (month <= 2)
    era = shifted // 400
    of_era = shifted - era * 400
    of_year = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    days = (era * 146097 + of_era * 365 + of_era // 4 - of_era // 100 + of_year - 719468).astype(
        np.int64
    )
    micros = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000
    good &= (micros >= EARLIEST_MICROS) & (micros < LATEST_MICROS)
    return np.where(good, micros, -1), good


def _fixed_width_utc(array: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(microseconds, which rows are a valid ``YYYY-MM-DDTHH:MM:SSZ``, or the same with a
    fraction of ``width - 21`` digits) of a column whose values all have one ``width``, 20 or
    22-27; None for any other column, and for a column with fractions that the cast refuses
    (the Python parser names its bad rows). A row not valid goes to the Python parser."""
    n = len(array)
    if n == 0 or array.null_count or array.type != pa.string():
        return None
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[array.offset : array.offset + n + 1]
    width = int(offsets[1] - offsets[0])
    if width not in _WIDTHS or offsets[-1] - offsets[0] != width * n:
        return None
    if (np.diff(offsets) != width).any():
        return None
    raw = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]].reshape(n, width)
    try:
        # 3x faster than the NumPy parse below; it accepts a space for the "T" and any year
        # from 0000, which the separators and bounds below refuse.
        parsed = cast(array, _UTC_MICROS)
    except pa.ArrowInvalid:  # some row is not a time: find which, in NumPy
        return _parse_fixed_width(raw) if width == 20 else None
    micros = np.frombuffer(parsed.buffers()[1], dtype=np.int64)[parsed.offset : parsed.offset + n]
    good = np.ones(n, dtype=bool)
    separators = _SEPARATORS if width == 20 else _fraction_separators(width)
    for column, separator in separators.items():
        good &= raw[:, column] == separator
    for column in range(20, width - 1):  # the fraction's digits (the cast took them as such)
        good &= (raw[:, column] - np.uint8(ord("0"))) <= 9
    good &= (micros >= EARLIEST_MICROS) & (micros < LATEST_MICROS)
    return np.where(good, micros, -1), good


_WIDTHS = {20, 22, 23, 24, 25, 26, 27}  # no fraction, or one of 1-6 digits (microseconds)


def _fraction_separators(width: int) -> dict[int, int]:
    """The separators of ``YYYY-MM-DDTHH:MM:SS.<fraction>Z`` of ``width`` characters."""
    return {**{c: s for c, s in _SEPARATORS.items() if c != 19}, 19: ord("."), width - 1: ord("Z")}
