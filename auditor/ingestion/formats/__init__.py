"""Import formats as plugins: one module a format, registered in ``FORMATS``.

``auditor import``, ``auditor stats`` and the API's readers find a format here by its name
(``--format``) or by the file's extension; the CLI's ``--format`` choices and the unknown-type
message are built from this table. docs/architecture.md ("An import format") has the recipe.
"""

from __future__ import annotations

from pathlib import Path

from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.formats import delimited, doccano, jsonl, label_studio, prodigy
from auditor.ingestion.formats.base import ImportFormat, ReadOptions, ReadState, Source

FORMATS: dict[str, ImportFormat] = {
    f.name: f
    for f in (delimited.FORMAT, jsonl.FORMAT, label_studio.FORMAT, prodigy.FORMAT, doccano.FORMAT)
}

__all__ = ["FORMATS", "ImportFormat", "ReadOptions", "ReadState", "Source", "find_format"]


def _by_extension() -> dict[str, str]:
    return {suffix: f.name for f in FORMATS.values() for suffix in f.extensions}


def find_format(path: Path, name: str | None = None) -> ImportFormat:
    """The format called ``name``, else the one that claims the file's extension."""
    if name is not None:
        try:
            return FORMATS[name]
        except KeyError:
            known = ", ".join(FORMATS)
            raise FileFormatError(f"unknown format {name!r}; formats are {known}") from None
    found = _by_extension().get(path.suffix.lower())
    if found is None:
        claimed = "; ".join(
            f"{', '.join(f.extensions)} ({f.name})" for f in FORMATS.values() if f.extensions
        )
        raise FileFormatError(
            f"{path.name}: unknown file type {path.suffix!r}; use {claimed}, or give --format "
            f"({', '.join(FORMATS)})"
        )
    return FORMATS[found]
