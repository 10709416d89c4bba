"""The opaque-id permutation: a bijection on [0, 2**48) per (kind, project), keyed."""

from __future__ import annotations

import itertools
import random

from auditor.services.access.public_ids import LIMIT, PublicIds


def test_round_trip_and_range_on_small_large_and_random_ids() -> None:
    ids = PublicIds(b"k" * 32)
    draw = random.Random(7)
    values = [0, 1, 2, 41, 2**24 - 1, 2**24, 2**31 - 1, LIMIT - 1]
    values += [draw.randrange(LIMIT) for _ in range(2000)]
    for value in values:
        token = ids.encode("snapshot", 3, value)
        assert 0 <= token < LIMIT
        assert ids.decode("snapshot", 3, token) == value
    tokens = {ids.encode("snapshot", 3, v) for v in values}
    assert len(tokens) == len(set(values))  # injective on the sample


def test_consecutive_ids_look_unrelated_and_depend_on_project_kind_and_key() -> None:
    ids = PublicIds(b"k" * 32)
    run = [ids.encode("silence", 1, v) for v in range(1, 21)]
    assert run != sorted(run)  # order is not kept (a 1 in 20! chance of a false failure)
    gaps = {b - a for a, b in itertools.pairwise(run)}
    assert len(gaps) == len(run) - 1  # no constant stride to count rows by
    assert ids.encode("silence", 1, 5) != ids.encode("silence", 2, 5)
    assert ids.encode("silence", 1, 5) != ids.encode("snapshot", 1, 5)
    assert PublicIds(b"x" * 32).encode("silence", 1, 5) != ids.encode("silence", 1, 5)
    assert ids.decode("silence", 1, LIMIT) is None and ids.decode("silence", 1, -1) is None
