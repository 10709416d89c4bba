"""``auditor import PROJECT FILE``: stream a file of labels (CSV, JSONL, a tool's export) into a
project.

The file is read in batches of AUDITOR_IMPORT_BATCH_SIZE rows (bounded memory) and written in
one transaction: a file with any bad row writes nothing, and the report names the bad rows.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

import typer

from auditor.cli._common import count
from auditor.cli._read_options import (
    BATCH_SIZE,
    DELIMITER,
    FORMAT,
    FROM_NAME,
    ITEM_FIELD,
    MAP,
    STRICT,
    notices,
    read_options,
)
from auditor.config import get_settings
from auditor.ingestion.formats.label_studio import FORMAT as LABEL_STUDIO_FORMAT
from auditor.ingestion.readers import LabelFileReader, ReadOptions
from auditor.services.ingest.labels import ImportResult, import_batches
from auditor.services.label_studio.settings import import_options
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

LABEL_STUDIO = LABEL_STUDIO_FORMAT.name


def summary(path: Path, result: ImportResult, where: Callable[[int], str] | None = None) -> str:
    """What the import did, or why nothing was imported (``where`` names a row's place in a
    document)."""
    if result.repeats is not None:
        earlier = result.repeats
        return (
            f"error: {path.name} has the same content as import {earlier.id} "
            f"({earlier.source}, {earlier.created_at.isoformat(timespec='seconds')}, "
            f"{earlier.inserted} inserted) and rows that neither labeled_at nor a key "
            "identify; nothing was imported. Use --again to import it again, or "
            f"`auditor imports revert` to undo import {earlier.id} first."
        )
    if not result.rejected:
        return (
            f"{path.name}: {count(result.rows, 'row')}, {result.inserted} inserted, "
            f"{count(result.duplicates, 'duplicate')}, 0 rejected (import {result.import_id})"
        )
    lines = [f"  {error.located(where)}" for error in result.errors]
    if result.error_count > len(result.errors):
        lines.append(f"  ... and {result.error_count - len(result.errors)} more")
    lines.append(
        f"{path.name}: {count(result.rows, 'row')}, {result.bad_rows} rejected "
        f"({count(result.error_count, 'error')}); nothing was imported"
    )
    return "\n".join(lines)


def run_import(
    project: str,
    path: Path,
    file_format: str | None = None,
    batch_size: int | None = None,
    *,
    again: bool = False,
    options: ReadOptions | None = None,
) -> tuple[ImportResult, LabelFileReader]:
    """Import ``path`` into ``project`` with a progress bar when stderr is a terminal; the
    result and the reader (which names the rows of its errors)."""
    settings = get_settings()
    size = batch_size or settings.import_batch_size
    reader = LabelFileReader(path, size, file_format, options, refuse_empty=True)
    if reader.format == LABEL_STUDIO:
        # one mapping for the webhook, the sync and the import: the project's settings
        given = reader.options.label_studio
        ls = import_options(UnitOfWork(make_engine(settings.database_url)), project, given)
        reader.source.options = dataclasses.replace(reader.options, label_studio=ls)
    try:
        return _run(reader, project, path, again, settings.database_url), reader
    finally:
        for line in notices(reader):
            typer.echo(line, err=True)


def _run(reader: LabelFileReader, project: str, path: Path, again: bool, url: str) -> ImportResult:
    uow = UnitOfWork(make_engine(url))

    def run(on_batch: Callable[[ImportResult], None] | None = None) -> ImportResult:
        return import_batches(
            uow,
            project,
            reader,
            on_batch=on_batch,
            source=path.name,
            hash_rows=True,  # the rows, not the bytes: a CRLF copy is the same content
            again=again,
            label_studio_keys=reader.format == LABEL_STUDIO,
        )

    if not sys.stderr.isatty():
        return run()
    with typer.progressbar(length=reader.size, label=path.name, file=sys.stderr) as bar:
        done = 0

        def advance(_: ImportResult) -> None:
            nonlocal done
            bar.update(reader.position - done)
            done = reader.position

        return run(advance)


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_(
        project: str = typer.Argument(..., help="Project slug."),
        path: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True),
        file_format: str | None = FORMAT,
        delimiter: str | None = DELIMITER,
        mapping: str | None = MAP,
        strict: bool = STRICT,
        item_field: str | None = ITEM_FIELD,
        from_name: str | None = FROM_NAME,
        batch_size: int | None = BATCH_SIZE,
        again: bool = typer.Option(
            False, "--again", help="Import a file whose content was imported before anyway."
        ),
    ) -> None:
        """Import labels in long format: columns item, rater, label, and optionally
        session, labeled_at, rater_kind, key."""
        options = read_options(delimiter, mapping, strict, item_field, from_name)
        result, reader = run_import(
            project, path, file_format, batch_size, again=again, options=options
        )
        if result.rejected:
            typer.echo(summary(path, result, reader.where), err=True)
            raise typer.Exit(1)
        typer.echo(summary(path, result))
