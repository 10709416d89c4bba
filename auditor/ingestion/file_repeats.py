"""Could a file repeat one of its own rows across batches? A cheap answer, in NumPy.

Each batch already judged its own repeats (``batch.check_natural_identity``,
``check_client_keys``); a repeat across batches needs the whole file. Rows are hashed by
natural identity (item, rater, session, labeled_at; rows giving labeled_at and no key) and
by client key, 8 bytes a row; when no hash occurs twice, no row repeats another and the
set-based judgement of the file (``Staging.judge_file``) has nothing to find. Equal hashes
(a repeat, or a rare collision) only mean it must run.
"""

from __future__ import annotations

import numpy as np

from auditor.ingestion.batch import ValidBatch
from auditor.ingestion.identity import any_equal, row_hashes


class FileRepeats:
    def __init__(self) -> None:
        self._identities: list[np.ndarray] = []
        self._keys: list[np.ndarray] = []
        self.unknown = False  # a batch without codes: cannot tell

    def update(self, batch: ValidBatch) -> None:
        coded = batch.coded
        if coded is None:
            self.unknown = self.unknown or batch.labeled_at is not None or batch.key is not None
            return
        keep = np.ones(len(batch), dtype=bool)
        keep[list(batch.duplicate_rows)] = False
        if "key" in coded:
            key = coded["key"]
            has_key = key.codes != (key.values.index(None) if None in key.values else -1)
            self._keys.append(_hashes(key)[has_key & keep])
        else:
            has_key = np.zeros(len(batch), dtype=bool)
        micros = coded.get("micros")
        if micros is None:
            return
        # A batch without the session column (a JSONL block where no record gives it) reads
        # as sessions of None, so its rows hash as the same rows of a batch that has one.
        no_session = np.full(len(batch), hash(None), dtype=np.int64).view(np.uint64)
        session = _hashes(coded["session"]) if "session" in coded else no_session
        mixed = row_hashes([_hashes(coded["item"]), _hashes(coded["rater"]), session, micros])
        self._identities.append(mixed[(micros >= 0) & ~has_key & keep])

    def possible(self) -> bool:
        """True unless no row can repeat an earlier batch's row."""
        if self.unknown:
            return True
        found = [_repeats(parts) for parts in (self._identities, self._keys)]
        return any(found)


def _hashes(column: object) -> np.ndarray:
    values = column.values  # type: ignore[attr-defined]
    codes = column.codes  # type: ignore[attr-defined]
    per_value = np.asarray([hash(v) for v in values], dtype=np.int64).view(np.uint64)
    return per_value[codes]  # type: ignore[no-any-return]


def _repeats(parts: list[np.ndarray]) -> bool:
    """Does a hash occur twice? ``parts`` is emptied: 8 bytes a row are held twice at most
    (the batches' arrays while they are joined), then sorted in place."""
    if len(parts) < 2:
        return False  # one batch: it judged itself
    hashes = np.concatenate(parts)
    parts.clear()
    return any_equal(hashes)
