"""labeled_at parsed column-wise: pyarrow's ISO 8601 cast (the fast path) and the NumPy parse
of the bytes (which finds each bad row) agree on every 20-character value; with fractions the
cast and the Python parser agree."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from auditor.ingestion.batch import _timestamp
from auditor.ingestion.errors import RowError
from auditor.ingestion.times import _fixed_width_utc, _parse_fixed_width, labeled_at_column

VALID = [
    "2024-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z", "2000-02-29T12:30:45Z", "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "2100-02-28T00:00:00Z",
]  # fmt: skip
NOISE = "0123456789 -T:Zz+/.x"


def _bytes(values: list[str]) -> np.ndarray:
    return np.frombuffer("".join(values).encode(), dtype=np.uint8).reshape(len(values), 20)


def _mutations(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = list(rng.choice(VALID))
        for _ in range(rng.choice([0, 1, 1, 2])):
            text[rng.randrange(20)] = rng.choice(NOISE)
        out.append("".join(text))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_the_cast_and_the_numpy_parse_agree_value_by_value(seed: int) -> None:
    for value in _mutations(seed, 200):
        fast = _fixed_width_utc(pa.array([value]))
        assert fast is not None
        expected = _parse_fixed_width(_bytes([value]))
        assert fast[1].tolist() == expected[1].tolist(), value
        assert fast[0].tolist() == expected[0].tolist(), value


def test_a_column_the_cast_accepts_still_refuses_what_the_shape_refuses() -> None:
    values = ["2024-01-01T00:00:00Z", "2024-01-01 00:00:00Z", "0000-01-01T00:00:00Z"]
    assert pa.array(values).cast(pa.timestamp("us", tz="UTC")) is not None  # the fast path
    micros, good = _fixed_width_utc(pa.array(values))  # type: ignore[misc]
    assert good.tolist() == [True, False, False]
    assert micros.tolist() == [1_704_067_200_000_000, -1, -1]


def test_a_column_with_an_impossible_date_finds_that_row() -> None:
    values = ["2024-01-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T00:00:01Z"]
    micros, good = _fixed_width_utc(pa.array(values))  # type: ignore[misc]
    assert good.tolist() == [True, False, True]
    assert micros[2] - micros[0] == 1_000_000


def test_arrays_made_from_buffers_equal_pyarrows_own() -> None:
    from auditor.ingestion.arrow_calls import from_numpy

    for values in (np.array([True, False, True] * 7), np.array([3, -1, 2**40]), np.array([], int)):
        assert from_numpy(values).to_pylist() == values.tolist()


FRACTIONS = [
    "2024-01-01T00:00:00.5Z", "2024-02-29T23:59:59.999Z", "1970-01-01T00:00:00.000000Z",
    "2099-12-31T23:59:59.999999Z", "2024-06-30T12:30:45.123456Z", "1969-12-31T23:59:59.99Z",
    "2024-03-01T01:02:03.0001Z", "2100-01-01T00:00:00.00000Z",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(10))
def test_fractions_on_the_fast_path_read_as_the_python_parser_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        text = list(rng.choice(FRACTIONS))
        for _ in range(rng.choice([0, 1, 1, 2])):
            text[rng.randrange(len(text))] = rng.choice(NOISE)
        value = "".join(text)
        fast = _fixed_width_utc(pa.array([value]))
        expected, message = _timestamp(value)
        if fast is None:  # the cast refused it: the Python parser names it
            continue
        micros, good = fast
        if good[0]:
            assert message is None and micros[0] == expected, value
        else:  # to the Python parser, which reads it (another shape) or names it
            assert micros[0] == -1, value


def test_a_column_of_microseconds_needs_no_python_parse() -> None:
    values = ["2024-01-05T12:34:56.123456Z", "2024-01-05T00:00:00.000001Z"] * 3
    errors: list[RowError] = []
    times, micros = labeled_at_column(pa.chunked_array([values]), np.arange(6), errors)
    assert times is None and not errors  # None: no row went through the Python parser
    assert micros.tolist() == [_timestamp(value)[0] for value in values]


def test_a_bad_row_among_fractions_is_named_by_the_python_parser() -> None:
    values = ["2024-01-05T12:34:56.123Z", "2023-02-29T00:00:00.000Z", "2024-01-05T12:34:57.500Z"]
    errors: list[RowError] = []
    times, _ = labeled_at_column(pa.chunked_array([values]), np.arange(2, 5), errors)
    assert [error.row for error in errors] == [3]
    assert times == [_timestamp(values[0])[0], None, _timestamp(values[2])[0]]
