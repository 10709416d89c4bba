"""The file-reading options shared by ``auditor import`` and ``auditor stats``: both commands
read files the same way, so they take the same options."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from auditor.cli._common import fail

if TYPE_CHECKING:
    from auditor.ingestion.readers import LabelFileReader, ReadOptions


class FileFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"
    LABEL_STUDIO = "label-studio"


FORMAT = typer.Option(
    None,
    "--format",
    help="Default: from the extension (.csv/.tsv/.txt, .jsonl/.ndjson, .json = Label Studio).",
)
DELIMITER = typer.Option(
    None, "--delimiter", help="CSV delimiter: ',', 'tab', ';' or '|' (default: sniffed)."
)
MAP = typer.Option(
    None, "--map", help="The file's column for a field, e.g. item=case_id,rater=annotator."
)
STRICT = typer.Option(False, "--strict", help="Refuse columns that are no field.")
ITEM_FIELD = typer.Option(
    None, "--item-field", help="Label Studio: the item is data.<key> (default: the task id)."
)
FROM_NAME = typer.Option(
    None, "--from-name", help="Label Studio: the choices control to read when there are several."
)
BATCH_SIZE = typer.Option(None, min=1, help="Rows per batch (default AUDITOR_IMPORT_BATCH_SIZE).")


def read_options(
    delimiter: str | None,
    mapping: str | None,
    strict: bool,
    item_field: str | None,
    from_name: str | None,
) -> ReadOptions:
    """The options as the reader takes them; exits 2 naming a bad value."""
    from auditor.ingestion.label_studio import LabelStudioOptions
    from auditor.ingestion.readers import ReadOptions, parse_delimiter, parse_mapping

    try:
        return ReadOptions(
            delimiter=parse_delimiter(delimiter) if delimiter is not None else None,
            mapping=parse_mapping(mapping) if mapping else {},
            strict=strict,
            label_studio=LabelStudioOptions(item_field=item_field, from_name=from_name),
        )
    except ValueError as error:
        fail(str(error), 2)


def notices(reader: LabelFileReader) -> list[str]:
    """One line per thing the reader left out: ignored columns, skipped annotations."""
    lines = []
    if reader.ignored_columns:
        names = ", ".join(repr(name) for name in reader.ignored_columns)
        lines.append(f"{reader.path.name}: ignored column(s) {names} (--strict refuses them)")
    if reader.skipped or reader.ignored_results:
        parts = [f"{n} {reason}(s)" for reason, n in sorted(reader.skipped.items())]
        parts += [f"{n} '{kind}' result(s)" for kind, n in sorted(reader.ignored_results.items())]
        lines.append(f"{reader.path.name}: skipped {', '.join(parts)}")
    return lines
