"""Column-wise validation of a batch read by pyarrow: the rules of ``auditor.ingestion.batch``,
checked per column in C, with the same error messages.

Each id column is dictionary-encoded (in C); the distinct values go through the same Python
normaliser as a ``RawBatch`` (10 raters, 4 labels, 100k items per million rows), and rows
are mapped to the verdicts through NumPy. labeled_at in the common shape
(``YYYY-MM-DDTHH:MM:SSZ``) is parsed by pyarrow; any other value goes through the Python
parser, so a bad value is named with the message the Python path gives. Bad rows are found
by mask and only they become ``RowError``s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from auditor.domain import EARLIEST_MICROS, LATEST_MICROS
from auditor.ingestion.batch import (
    ID_MAX,
    Normalised,
    ValidBatch,
    _label_checker,
    _optional_id,
    _rater_kind,
    _required_id,
    _timestamp,
    check_client_keys,
    check_natural_identity,
    check_rater_kinds,
)
from auditor.ingestion.errors import IngestRejected, RowError
from auditor.ingestion.identity import surely_distinct

# RE2 syntax; the shape batch._PLAIN_UTC matches.
_PLAIN_UTC = r"^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$"


class Coded:
    """A column as codes into ``values`` (distinct normalised values, in order of first
    sight): what ``auditor.ingestion.arrays`` turns into dense indices without a row loop."""

    def __init__(self, codes: np.ndarray, values: list[object]) -> None:
        self.codes = codes
        self.values = values

    def as_list(self) -> list[object]:
        lookup = np.empty(len(self.values), dtype=object)
        lookup[:] = self.values
        return lookup[self.codes].tolist() if len(self.codes) else []


FAST_FROM = 64  # distinct values from which the C pre-check pays for itself


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


def _plain_ids(dictionary: pa.Array) -> np.ndarray:
    """Values that are already normal ids: ASCII (so NFC), 1 to ID_MAX characters, no control
    character, no surrounding blank. The others go through the Python normaliser."""
    length = as_numpy(pc.binary_length(dictionary))
    ok = pc.and_(
        pc.string_is_ascii(dictionary),
        pc.invert(pc.match_substring_regex(dictionary, r"[\x00-\x1f\x7f]")),
    )
    ok = pc.and_(ok, pc.equal(pc.ascii_trim_whitespace(dictionary), dictionary))
    ok = pc.and_kleene(ok, pc.is_valid(dictionary))  # null (JSON): the Python normaliser
    return as_numpy(ok) & (length > 0) & (length <= ID_MAX)


class CodedBatch(ValidBatch):
    """A ``ValidBatch`` whose lists are made from the codes on first use: reading a file
    into label arrays never needs them, an import does."""

    def __init__(
        self,
        lines: np.ndarray,
        coded: dict[str, Coded],
        times: list[int | None] | None,
        micros: np.ndarray | None,
    ) -> None:
        self._lines = lines
        self._coded = coded
        self._lists: dict[str, list[Any]] = {}
        self._times = times
        self._micros = micros
        self.rater_kind = self._list("rater_kind")  # read by every check: made now
        self.key = self._list("key")

    def _list(self, name: str) -> list[Any] | None:
        if name not in self._coded:
            return None
        if name not in self._lists:
            self._lists[name] = self._coded[name].as_list()
        return self._lists[name]

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def rows(self) -> list[int]:  # type: ignore[override]
        if "rows" not in self._lists:
            self._lists["rows"] = self._lines.tolist()
        return self._lists["rows"]

    @property
    def item(self) -> list[str]:  # type: ignore[override]
        return self._list("item")  # type: ignore[return-value]

    @property
    def rater(self) -> list[str]:  # type: ignore[override]
        return self._list("rater")  # type: ignore[return-value]

    @property
    def label(self) -> list[str]:  # type: ignore[override]
        return self._list("label")  # type: ignore[return-value]

    @property
    def session(self) -> list[str | None] | None:  # type: ignore[override]
        return self._list("session")

    @property
    def labeled_at(self) -> list[int | None] | None:  # type: ignore[override]
        """Microseconds (None where empty); a list of 1M ints costs 30 ms: made on first use."""
        if self._times is None and self._micros is not None:
            self._times = self._micros.tolist()
        return self._times


def _coded(
    column: pa.ChunkedArray,
    lines: np.ndarray,
    name: str,
    normalise: Callable[[object], Normalised],
    errors: list[RowError],
) -> Coded:
    encoded = column.combine_chunks().dictionary_encode(null_encoding="encode")  # null: None
    codes = as_numpy(encoded.indices).astype(np.int64)
    dictionary = encoded.dictionary
    distinct = dictionary.to_pylist()
    if normalise in (_required_id, _optional_id) and len(distinct) > FAST_FROM:
        plain = _plain_ids(dictionary)
        if plain.all():  # every value is its own normal form, and they are distinct
            return Coded(codes, distinct)
        verdicts = [
            (value, None) if ok else normalise(value)
            for value, ok in zip(distinct, plain.tolist(), strict=True)
        ]
    else:
        verdicts = [normalise(value) for value in distinct]
    bad = [index for index, (_, message) in enumerate(verdicts) if message is not None]
    if bad:
        for position in np.flatnonzero(np.isin(codes, bad)):
            message = verdicts[codes[position]][1]
            errors.append(RowError(int(lines[position]), name, str(message)))
    # Two raw values may normalise to one ("a " and "a"): recode by the normalised value.
    first: dict[object, int] = {}
    remap = np.asarray([first.setdefault(value, len(first)) for value, _ in verdicts], np.int64)
    return Coded(remap[codes] if len(first) < len(verdicts) else codes, list(first))


def _times(
    column: pa.ChunkedArray, lines: np.ndarray, errors: list[RowError]
) -> tuple[list[int | None] | None, np.ndarray]:
    """labeled_at as an array of microseconds with -1 where empty, and as a list with None
    there when some row is empty or not in the common shape (else None: the array says all)."""
    array = column.combine_chunks()
    fixed = _fixed_width_utc(array)
    if fixed is not None:
        micros, good = fixed
        return _with_fallback(array, micros, good, lines, errors)
    plain = as_numpy(pc.and_kleene(pc.match_substring_regex(array, _PLAIN_UTC), pc.is_valid(array)))
    parsed = pc.strptime(array, format="%Y-%m-%dT%H:%M:%SZ", unit="us", error_is_null=True)
    micros = parsed.cast(pa.int64()).fill_null(-1).to_numpy(zero_copy_only=False).copy()
    # strptime rolls an impossible date over (February 30 -> March 1): a time is taken only
    # when its month and day are the ones written (strftime back would say so too, 20x slower).
    same_text = plain.copy()
    if plain.any():
        shape = pa.array(plain)
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
    texts = array.take(pa.array(rest)).to_pylist()
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


def _fixed_width_utc(array: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(microseconds, which rows are a valid ``YYYY-MM-DDTHH:MM:SSZ``) from the bytes of a
    column whose values are all 20 characters long, in NumPy (about 10x pyarrow's regex and
    strptime); None for any other column. A row not valid goes to the Python parser."""
    n = len(array)
    if n == 0 or array.null_count or array.type != pa.string():
        return None
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[array.offset : array.offset + n + 1]
    if offsets[-1] - offsets[0] != 20 * n or (np.diff(offsets) != 20).any():
        return None
    raw = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]].reshape(n, 20)
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


def _identities_unique(times: np.ndarray | None, coded: dict[str, Coded]) -> bool:
    """Are the (item, rater, session, labeled_at) of the rows giving labeled_at and no key
    all distinct? Then ``check_natural_identity`` has nothing to find (the usual case)."""
    if times is None:
        return True
    wanted = times >= 0
    if "key" in coded:
        key = coded["key"]
        wanted &= key.codes == (key.values.index(None) if None in key.values else -1)
    if wanted.sum() < 2:
        return True
    names = ["session", "rater", "item"] if "session" in coded else ["rater", "item"]
    columns = [times] + [coded[name].codes for name in names]
    if not wanted.all():
        columns = [column[wanted] for column in columns]
    if surely_distinct(columns):
        return True
    if np.prod([float(len(coded[name].values)) for name in names]) < 2**62:
        # the codes packed into one key: one key sorts 2x faster than three
        packed = columns[-1]
        for name, codes in zip(names[-2::-1], columns[-2:0:-1], strict=True):
            packed = packed * len(coded[name].values) + codes
        columns = [columns[0], packed]
    order = np.lexsort(columns)
    same = np.ones(len(order) - 1, dtype=bool)
    for column in columns:
        ordered = column[order]
        same &= ordered[1:] == ordered[:-1]
    return not same.any()


def validate_columns(
    table: pa.Table,
    lines: np.ndarray,
    reader_errors: list[RowError],
    categories: Sequence[str] | None,
) -> ValidBatch:
    """``validate_batch`` for a batch of text columns (see the module docstring)."""
    errors = list(reader_errors)
    present = set(table.column_names)
    check_label = _required_id if categories is None else _label_checker(categories)
    checks: dict[str, Callable[[object], Normalised]] = {
        "item": _required_id,
        "rater": _required_id,
        "label": check_label,
        "session": _optional_id,
        "rater_kind": _rater_kind,
        "key": _optional_id,
    }
    coded = {
        name: _coded(table.column(name), lines, name, check, errors)
        for name, check in checks.items()
        if name in present
    }
    times, micros = (None, None)
    if "labeled_at" in present:
        times, micros = _times(table.column("labeled_at"), lines, errors)
    batch = CodedBatch(lines, coded, times, micros)
    batch.coded = {**coded, "lines": lines, "micros": micros}
    batch.duplicate_rows = set()
    if not errors:
        check_rater_kinds(batch, errors)
        check_client_keys(batch, errors)
        if not _identities_unique(micros, coded):
            check_natural_identity(batch, errors)
    if errors:
        raise IngestRejected(errors)
    return batch
