"""The pyarrow JSON Lines reader gives what the Python reference reader gives: the same rows,
values, line numbers, errors and ignored fields, on random files mixing every awkward case
(blank lines, CRLF, BOM, integers, nulls, missing and extra keys, other types, repeated keys,
bad JSON, bytes that are not UTF-8, bad times, mappings, --strict), with chunks and batches
small enough to cut through them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from auditor.ingestion import arrow_csv, arrow_json
from auditor.ingestion.batch import validate_batch
from auditor.ingestion.errors import IngestRejected
from auditor.ingestion.readers import LabelFileReader, ReadOptions

VALUES: list[object] = [
    "a", "b ", " c", "", "é", "e\u0301", "x", "y", "\t", "abc", 'm"n', "q,1", "\u200b",
    "k" * 201, "r\rx", "1", 7, -3, 2.5, True, None, [1], {"a": 1},
    "2024-01-01T00:00:00Z", "2024-02-30T00:00:00Z", "1969-12-31T23:59:59Z",
    "2024-01-01T00:00:00+02:00", "human", "model", "Model ",
]  # fmt: skip
KEYS = ["item", "rater", "label", "labeled_at", "session", "rater_kind", "key", "extra", "case"]
LINES = ["", "   ", "[1, 2]", '"text"', "{bad json", '{"item": "a", "item": "b"}', "\udcff"]


def _read(
    path: Path, columnar: bool, batch_size: int, options: ReadOptions
) -> tuple[list[str], list[tuple] | None, list[str]]:
    rows: list[tuple] = []
    errors: list[str] = []
    reader = LabelFileReader(path, batch_size, options=options, columnar=columnar)
    for raw in reader:
        try:
            batch = validate_batch(raw, None)
        except IngestRejected as rejection:
            errors += [str(error) for error in rejection.errors]
            continue
        n = len(batch)
        columns = [batch.rows, batch.item, batch.rater, batch.label]
        columns += [
            c or [None] * n for c in (batch.labeled_at, batch.session, batch.rater_kind, batch.key)
        ]
        rows += list(zip(*columns, strict=True))
    return sorted(errors), (rows if not errors else None), reader.ignored_columns


def _line(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return rng.choice(LINES)
    keys = rng.sample(KEYS, rng.randrange(2, len(KEYS)))
    common = ["item", "rater", "label"]
    keys = [k for k in common if rng.random() < 0.9] + [k for k in keys if k not in common]
    record = {key: rng.choice(VALUES) for key in keys}
    return json.dumps(record, ensure_ascii=rng.random() < 0.5)


TEXTS = ["a", "b", "é", "e\u0301", " c", "", "k" * 201, "\u200b", "x\ty", "Model", "human"]
TIMES = ["2024-01-01T00:00:00Z", "2024-02-30T00:00:00Z", "2024-01-01T00:00:00+02:00", "", "x"]


def _plain_line(rng: random.Random, integers: set[str]) -> str:
    """A line pyarrow reads: an object whose values are text, integers or null (a key's
    values all of one kind), some keys missing, some extra."""
    record: dict[str, object] = {}
    for key in rng.sample(KEYS, len(KEYS)):
        if rng.random() < (0.9 if key in ("item", "rater", "label") else 0.4):
            if rng.random() < 0.05:
                record[key] = None
            elif key in integers and key != "labeled_at":
                record[key] = rng.choice([0, 7, -3, 10**12])
            else:
                record[key] = rng.choice(TIMES if key == "labeled_at" else TEXTS)
    return json.dumps(record, ensure_ascii=rng.random() < 0.5)


@pytest.mark.parametrize("seed", range(6))
def test_same_as_the_python_reader(tmp_path: Path, monkeypatch, seed: int) -> None:
    monkeypatch.setattr(arrow_csv, "PRESCAN_CHUNK", 64)
    monkeypatch.setattr(arrow_json, "PRESCAN_CHUNK", 64)
    rng = random.Random(seed)
    for n in range(120):
        plain = rng.random() < 0.4  # only well-formed text records: the columnar path throughout
        lines = []
        integers = {key for key in KEYS if rng.random() < 0.2}  # a key's values: all integers
        for _ in range(rng.randrange(0, 14)):
            if plain:
                lines.append(_plain_line(rng, integers))
            else:
                lines.append(_line(rng))
        end = rng.choice(["\n", "\r\n"])
        body = end.join(lines) + rng.choice(["", end, end + end])
        if rng.random() < 0.1:
            body = "\ufeff" + body
        path = tmp_path / f"f{n}.jsonl"
        path.write_bytes(body.encode("utf-8", "surrogateescape"))
        mapping = rng.choice([{}, {}, {"item": "case"}, {"rater": "extra", "item": "case"}])
        options = ReadOptions(mapping=mapping, strict=rng.random() < 0.2)
        size = rng.choice([1, 3, 1000])
        # small blocks: several per batch, and a line longer than a block (pyarrow refuses it:
        # the Python reader reads on from there)
        monkeypatch.setattr(arrow_json, "BLOCK_SIZE", rng.choice([256, 1024, 1 << 20]))
        expected = _read(path, False, size, options)
        assert _read(path, True, size, options) == expected, repr(body)


def test_a_plain_file_is_read_by_pyarrow(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    records = [{"item": i, "rater": "r1", "label": "a", "note": "x"} for i in range(5)]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    reader = LabelFileReader(path, 2)
    batches = list(reader)
    assert all(isinstance(b, arrow_json.JsonColumnBatch) for b in batches)
    assert [validate_batch(b, None).item for b in batches] == [["0", "1"], ["2", "3"], ["4"]]
    assert reader.ignored_columns == ["note"]


@pytest.mark.parametrize("offset", [0, 3, 9])
def test_as_numpy_reads_sliced_buffers(offset: int) -> None:
    """``as_numpy`` (pyarrow's buffers, no pandas import) gives ``to_numpy`` of a slice."""
    import numpy as np
    import pyarrow as pa

    from auditor.ingestion.columnar import as_numpy

    values = [i % 3 == 0 for i in range(20)]
    for array in (pa.array(values), pa.array(range(20), pa.int32()), pa.array(range(20))):
        part = array.slice(offset, 7)
        assert np.array_equal(as_numpy(part), part.to_numpy(zero_copy_only=False))
