"""The pyarrow CSV reader gives what the Python reference reader gives: the same rows, values,
line numbers and errors, on random files mixing every awkward case (blank lines, CRLF, BOM,
quotes, quoted line breaks, wrong field counts, bytes that are not UTF-8, bad times), with
chunks and batches small enough to cut through them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from auditor.ingestion import arrow_csv
from auditor.ingestion.batch import validate_batch
from auditor.ingestion.errors import IngestRejected
from auditor.ingestion.readers import LabelFileReader

PIECES = [
    "a", "b ", " c", '"q,1"', '""', "", "é", "e\u0301", "x", "y", "\t", "abc", '"m""n"',
    "2024-01-01T00:00:00Z", "2024-02-30T00:00:00Z", "1969-12-31T23:59:59Z",
    "2024-01-01T00:00:00+02:00", '"multi\nline"', "\udcff", "  ", "\u200b", "k" * 201,
    "r\rx", "1", "human", "model",
]  # fmt: skip


def _read(path: Path, columnar: bool, batch_size: int) -> tuple[list[str], list[tuple] | None]:
    rows: list[tuple] = []
    errors: list[str] = []
    for raw in LabelFileReader(path, batch_size, columnar=columnar):
        try:
            batch = validate_batch(raw, None)
        except IngestRejected as rejection:
            errors += [str(error) for error in rejection.errors]
            continue
        n = len(batch)
        columns = [batch.rows, batch.item, batch.rater, batch.label]
        columns += [c or [None] * n for c in (batch.labeled_at, batch.session, batch.rater_kind)]
        rows += list(zip(*columns, strict=True))
    return sorted(errors), (rows if not errors else None)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [None, 300])
def test_same_as_the_python_reader(
    tmp_path: Path, monkeypatch, seed: int, chunk: int | None
) -> None:
    monkeypatch.setattr(arrow_csv, "PRESCAN_CHUNK", 64)
    if chunk:  # files parsed in many chunks (each of about 300 bytes of whole lines)
        monkeypatch.setattr(arrow_csv, "BLOCK_SIZE", (chunk, chunk))
    rng = random.Random(seed)
    for n in range(120):
        delimiter = rng.choice([",", ",", ";"])
        header = ["item", "rater", "label", "labeled_at", "session", "rater_kind", "extra"]
        lines = [delimiter.join(header[: rng.choice([3, 5, 6, 7])])]
        width = lines[0].count(delimiter) + 1
        for _ in range(rng.randrange(0, 14)):
            count = rng.choice([width] * 5 + [width - 1, width + 1, 0])
            pieces = [rng.choice(PIECES) for _ in range(count)]
            lines.append(delimiter.join(p.replace(",", delimiter) for p in pieces))
        end = rng.choice(["\n", "\r\n"])
        body = end.join(lines) + rng.choice(["", end, end + end])
        if rng.random() < 0.2:
            body = "\ufeff" + body
        path = tmp_path / f"f{n}.csv"
        path.write_bytes(body.encode("utf-8", "surrogateescape"))
        size = rng.choice([1, 3, 1000])
        assert _read(path, True, size) == _read(path, False, size), repr(body)


def test_a_batch_cut_from_a_block_codes_only_its_own_values(tmp_path: Path) -> None:
    # One pyarrow block, batches of 2 rows: each batch's dictionary is the block's.
    path = tmp_path / "labels.csv"
    path.write_text("item,rater,label\ni1,r1,a\ni2,r1,b\ni3,r2,a\ni1,r2,c\n")
    batches = list(LabelFileReader(path, 2))
    assert [len(batch) for batch in batches] == [2, 2]
    coded = [batch.validated(None).coded for batch in batches]  # type: ignore[union-attr]
    # In the block's order of first sight: i1 was seen before i3 (and has its id already).
    assert [c["item"].values for c in coded] == [["i1", "i2"], ["i1", "i3"]]
    assert [c["rater"].values for c in coded] == [["r1"], ["r2"]]
    assert [c["label"].values for c in coded] == [["a", "b"], ["a", "c"]]
    assert [c["item"].codes.tolist() for c in coded] == [[0, 1], [1, 0]]


CLEAN = ["a", "b ", '"q,1"', '""', "", "é", "x", "abc", "2024-01-01T00:00:00Z", "k" * 40, "1"]


@pytest.mark.parametrize("seed", range(4))
def test_files_parsed_in_many_chunks_read_as_the_python_reader(
    tmp_path: Path, monkeypatch, seed: int
) -> None:
    # Only pieces pyarrow reads (no quoted line break, lone CR, non-UTF-8): every file takes
    # the chunked path, with blank lines and wrong field counts across chunk ends.
    monkeypatch.setattr(arrow_csv, "BLOCK_SIZE", (200, 200))
    parsed = []
    monkeypatch.setattr(arrow_csv.pa_csv, "read_csv", _counting(parsed))
    rng = random.Random(seed)
    for n in range(40):
        lines = ["item,rater,label,labeled_at"]
        for _ in range(rng.randrange(1, 120)):
            count = rng.choice([4] * 8 + [3, 5, 0])
            lines.append(",".join(rng.choice(CLEAN) for _ in range(count)))
        end = rng.choice(["\n", "\r\n"])
        path = tmp_path / f"f{n}.csv"
        path.write_text(end.join(lines) + end, newline="")
        # Batches end at chunk ends too: small enough that no batch reaches the cap on the
        # errors reported per batch, so both readers report every error.
        size = rng.choice([1, 7, 20])
        assert _read(path, True, size) == _read(path, False, size), path.read_text()
    assert len(parsed) > 200  # many chunks were parsed by pyarrow, none left to Python


def _counting(parsed: list[int]):  # type: ignore[no-untyped-def]
    real = arrow_csv.pa_csv.read_csv

    def read_csv(*args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(1)
        return real(*args, **kwargs)

    return read_csv
