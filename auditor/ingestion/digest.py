"""The content hash of a file's parsed rows: what a re-import would write again, whatever
the bytes looked like (line endings, a BOM, the delimiter, column order, extra columns)."""

from __future__ import annotations

import hashlib

from auditor.ingestion.batch import ValidBatch


class RowsDigest:
    """SHA-256 of a file's parsed rows, in order: what a re-import would write again,
    whatever the bytes looked like. One running digest per column (batch boundaries do not
    matter), each column joined in C rather than hashed row by row in Python."""

    COLUMNS = ("item", "rater", "label", "session", "labeled_at", "rater_kind", "key")

    def __init__(self) -> None:
        self._columns = {name: hashlib.sha256() for name in self.COLUMNS}

    def update(self, batch: ValidBatch) -> None:
        for name, digest in self._columns.items():
            values = getattr(batch, name)
            if values is None:
                text = "\x1e" * len(batch)  # a column the file lacks: empty on every row
            elif name in ("item", "rater", "label"):
                text = "\x1e".join(values) + "\x1e"
            else:
                text = "\x1e".join("" if v is None else str(v) for v in values) + "\x1e"
            digest.update(text.encode())

    def hexdigest(self) -> str:
        combined = hashlib.sha256()
        for name, digest in self._columns.items():
            combined.update(name.encode() + b"=" + digest.digest())
        return combined.hexdigest()
