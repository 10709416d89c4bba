"""Errors that name what is wrong and where: row, field, reason."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from auditor.errors import Invalid

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
        return self.located()

    def located(self, where: Callable[[int], str] | None = None) -> str:
        """The error with its row named by ``where`` (a reader's: "row 3 (task 2 (id 7),
        annotation 1 (id 33))" in a document), else as "row N"."""
        place = where(self.row) if where is not None else f"row {self.row}"
        return f"{place}" + (f", field '{self.field}'" if self.field else "") + f": {self.message}"


class IngestRejected(Invalid):
    """A batch (or a file) was refused as a whole; nothing of it was written. ``message`` is
    the headline, ``str()`` the headline and the reported rows; ``details()`` names each bad
    row and field."""

    code = "labels_rejected"

    def __init__(self, errors: Iterable[RowError], total: int | None = None) -> None:
        ordered = sorted(errors)
        self.total = len(ordered) if total is None else total
        self.bad_rows = len({error.row for error in ordered})
        self.errors = ordered[:MAX_REPORTED_ERRORS]
        super().__init__(f"{self.total} bad row value(s); nothing was written")

    def __str__(self) -> str:
        return self.summary()

    def details(self) -> list[dict[str, Any]]:
        return [{"row": e.row, "field": e.field, "message": e.message} for e in self.errors]

    def summary(self) -> str:
        lines = [self.message]
        lines += [f"  {error}" for error in self.errors]
        if self.total > len(self.errors):
            lines.append(f"  ... and {self.total - len(self.errors)} more")
        return "\n".join(lines)


class FileFormatError(Invalid):
    """The file as a whole cannot be read (no header, a missing or unknown column)."""

    code = "file_format"


def shown(value: object, limit: int = 40) -> str:
    """A value quoted for an error message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(value))} characters)"
