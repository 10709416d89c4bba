"""Errors that name what is wrong and where: row, field, reason."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# How many row errors a rejection lists; the total is always reported.
MAX_REPORTED_ERRORS = 100


@dataclass(frozen=True, order=True)
class RowError:
    """``row`` is the 1-based line of a file (the header is line 1) or the 1-based position
    in a request; ``field`` is None for a problem with the row as a whole."""

    row: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.message}"


class IngestRejected(ValueError):
    """A batch (or a file) was refused as a whole; nothing of it was written."""

    def __init__(self, errors: Iterable[RowError], total: int | None = None) -> None:
        ordered = sorted(errors)
        self.total = len(ordered) if total is None else total
        self.bad_rows = len({error.row for error in ordered})
        self.errors = ordered[:MAX_REPORTED_ERRORS]
        super().__init__(self.summary())

    def summary(self) -> str:
        lines = [f"{self.total} bad row value(s); nothing was written"]
        lines += [f"  {error}" for error in self.errors]
        if self.total > len(self.errors):
            lines.append(f"  ... and {self.total - len(self.errors)} more")
        return "\n".join(lines)


class FileFormatError(ValueError):
    """The file as a whole cannot be read (no header, a missing or unknown column)."""


def shown(value: object, limit: int = 40) -> str:
    """A value quoted for an error message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(value))} characters)"
