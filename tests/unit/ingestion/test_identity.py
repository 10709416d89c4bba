"""The hashed distinctness check of natural identities, and the file reads that rely on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from auditor.ingestion import identity
from auditor.ingestion.arrays import read_label_arrays, read_with_dropped
from auditor.ingestion.errors import IngestRejected
from auditor.ingestion.readers import LabelFileReader


def exactly_distinct(columns: list[np.ndarray]) -> bool:
    return len({tuple(row) for row in zip(*(c.tolist() for c in columns), strict=True)}) == len(
        columns[0]
    )


@pytest.mark.parametrize("seed", range(200))
def test_the_hash_says_distinct_exactly_when_the_rows_are(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(0, 60)), int(rng.integers(1, 5))
    high = int(rng.choice([2, 5, 1 << 40]))  # few values: duplicates; many: none
    columns = [rng.integers(-1, high, n) for _ in range(width)]
    assert identity.surely_distinct(columns) == exactly_distinct(columns)


def test_rows_that_differ_only_by_swapped_columns_are_distinct() -> None:
    a, b = np.arange(1000), np.arange(1000)[::-1].copy()
    assert identity.surely_distinct([a, b])
    assert not identity.surely_distinct([np.r_[a, a[:1]], np.r_[b, b[:1]]])


CSV = (
    "item,rater,label,labeled_at\n"
    "i1,ann,yes,2026-01-01T10:00:00Z\n"
    "i2,ann,no,2026-01-01T10:00:00Z\n"
    "i1,ann,yes,2026-01-01T10:00:00Z\n"  # line 4: line 2 sent again, in a later batch
    "i1,bob,no,2026-01-01T10:00:00Z\n"
)


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_a_repeated_identity_is_dropped_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collide: bool, batch_size: int
) -> None:
    if collide:  # every hash equal: the exact check must give the same answer
        monkeypatch.setattr(identity, "row_hashes", lambda c: np.zeros(len(c[0]), np.uint64))
    path = tmp_path / "labels.csv"
    path.write_text(CSV)
    arrays, dropped = read_with_dropped(LabelFileReader(path, batch_size), None)
    assert dropped == 1
    assert arrays.item.tolist() == [0, 1, 0] and arrays.rater.tolist() == [0, 0, 1]


@pytest.mark.parametrize("collide", [False, True])
def test_a_conflicting_identity_names_both_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collide: bool
) -> None:
    if collide:
        monkeypatch.setattr(identity, "row_hashes", lambda c: np.zeros(len(c[0]), np.uint64))
    path = tmp_path / "labels.csv"
    path.write_text(
        CSV.replace(
            "i1,ann,yes,2026-01-01T10:00:00Z\ni1,bob", "i1,ann,no,2026-01-01T10:00:00Z\ni1,bob"
        )
    )
    with pytest.raises(IngestRejected) as caught:
        read_label_arrays(path, batch_size=2)
    assert [(e.row, e.field) for e in caught.value.errors] == [(4, "label")]
    assert "conflicts with row 2" in caught.value.errors[0].message
