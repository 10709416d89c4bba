"""The file-reading options shared by ``auditor import`` and ``auditor stats``: both commands
read files the same way, so they take the same options."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from auditor.cli._common import fail
from auditor.ingestion.formats import FORMATS

if TYPE_CHECKING:
    from auditor.ingestion.readers import LabelFileReader, ReadOptions


def _known_format(value: str | None) -> str | None:
    if value is not None and value not in FORMATS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(FORMATS)}")
    return value


# The choices are the registry's (auditor.ingestion.formats.FORMATS): a new format module
# appears here with no change to the commands.
FORMAT = typer.Option(
    None,
    "--format",
    callback=_known_format,
    metavar="|".join(FORMATS),
    help="Default: from the extension ("
    + ", ".join(f"{' '.join(f.extensions)} = {f.name}" for f in FORMATS.values() if f.extensions)
    + "); the others need --format.",
)
DELIMITER = typer.Option(
    None, "--delimiter", help="CSV delimiter: ',', 'tab', ';' or '|' (default: sniffed)."
)
MAP = typer.Option(
    None, "--map", help="The file's column for a field, e.g. item=case_id,rater=annotator."
)
STRICT = typer.Option(False, "--strict", help="Refuse columns that are no field.")
ITEM_FIELD = typer.Option(
    None,
    "--item-field",
    help="Where the item is: Label Studio data.<key> (default: the task id); Prodigy or "
    "doccano a key of the record, dotted for nested ones (default: _input_hash / id).",
)
FROM_NAME = typer.Option(
    None, "--from-name", help="Label Studio: the choices control that holds the label."
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
            item_field=item_field,
        )
    except ValueError as error:
        fail(str(error), 2)


def notices(reader: LabelFileReader) -> list[str]:
    """One line per thing the reader left out: ignored columns, skipped records."""
    lines = []
    if reader.ignored_columns:
        names = ", ".join(repr(name) for name in reader.ignored_columns)
        lines.append(f"{reader.path.name}: ignored column(s) {names} (--strict refuses them)")
    if reader.skipped:
        # "(s)" after a reason, unless it ends with its own explanation in parentheses
        parts = [
            f"{n} {reason}" + ("" if reason.endswith(")") else "(s)")
            for reason, n in sorted(reader.skipped.items())
        ]
        if parts:
            lines.append(f"{reader.path.name}: skipped {', '.join(parts)}")
    if reader.ignored_results:
        # issue 27: "skipped 180 'textarea' result(s)" read like lost labels
        kinds = ", ".join(
            f"{n} '{kind}' result{'s' if n != 1 else ''}"
            for kind, n in sorted(reader.ignored_results.items())
        )
        lines.append(
            f"{reader.path.name}: left out {kinds}: answers of other kinds than the label "
            "choices (free text, ratings of something else); no label of the project is lost"
        )
    return lines
