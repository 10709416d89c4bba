"""Column-wise validation of a batch read by pyarrow: the rules of ``auditor.ingestion.batch``,
checked per column in C, with the same error messages.

Each id column is dictionary-encoded (in C); the distinct values go through the same Python
normaliser as a ``RawBatch`` (10 raters, 4 labels, 100k items per million rows), and rows
are mapped to the verdicts through NumPy. labeled_at: ``auditor.ingestion.times``. Bad rows
are found by mask and only they become ``RowError``s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from auditor.ingestion.arrow_calls import as_numpy, call, from_numpy, matches, take
from auditor.ingestion.batch import (
    ID_MAX,
    Normalised,
    ValidBatch,
    _label_checker,
    _optional_id,
    _rater_kind,
    _required_id,
    check_client_keys,
    check_natural_identity,
    check_rater_kinds,
)
from auditor.ingestion.errors import IngestRejected, RowError
from auditor.ingestion.identity import surely_distinct
from auditor.ingestion.times import labeled_at_column


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


def _plain_ids(dictionary: pa.Array) -> np.ndarray:
    """Values that are already normal ids: ASCII (so NFC), 1 to ID_MAX characters, no control
    character, no surrounding blank. The others go through the Python normaliser."""
    length = as_numpy(call("binary_length", dictionary))
    ok = call(
        "and",
        call("string_is_ascii", dictionary),
        call("invert", matches(dictionary, r"[\x00-\x1f\x7f]")),
    )
    ok = call("and", ok, call("equal", call("ascii_trim_whitespace", dictionary), dictionary))
    ok = call("and_kleene", ok, call("is_valid", dictionary))  # null (JSON): Python's
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


def _used(codes: np.ndarray, dictionary: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Codes and dictionary without the values no row uses (a batch cut from a block holds
    the block's dictionary). Their order stays that of first sight in the block, which is
    the order of first sight in the file for every value new to this batch."""
    used = np.bincount(codes, minlength=len(dictionary)) > 0
    if used.all():
        return codes, dictionary
    return (np.cumsum(used) - 1)[codes], take(dictionary, from_numpy(np.flatnonzero(used)))


def _coded(
    column: pa.ChunkedArray,
    lines: np.ndarray,
    name: str,
    normalise: Callable[[object], Normalised],
    errors: list[RowError],
) -> Coded:
    array = column.combine_chunks()
    if pa.types.is_dictionary(array.type):  # encoded by the CSV reader, for a whole block
        codes, dictionary = _used(as_numpy(array.indices).astype(np.int64), array.dictionary)
    else:
        encoded = array.dictionary_encode(null_encoding="encode")  # null: None
        codes, dictionary = as_numpy(encoded.indices).astype(np.int64), encoded.dictionary
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


def _identities_unique(times: np.ndarray | None, coded: dict[str, Coded]) -> bool:
    """Are the (item, rater, session, labeled_at) of the rows giving labeled_at and no key
    surely all distinct? Then ``check_natural_identity`` has nothing to find (the usual case)."""
    if times is None:
        return True
    wanted = times >= 0
    if "key" in coded:
        key = coded["key"]
        wanted &= key.codes == (key.values.index(None) if None in key.values else -1)
    names = ["session", "rater", "item"] if "session" in coded else ["rater", "item"]
    columns = [times] + [coded[name].codes for name in names]
    if not wanted.all():
        columns = [column[wanted] for column in columns]
    # Equal hashes: a repeat, or (about once in 10^7 files) a collision, which the exact
    # check_natural_identity then finds to be none.
    return surely_distinct(columns)


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
        times, micros = labeled_at_column(table.column("labeled_at"), lines, errors)
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
