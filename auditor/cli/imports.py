"""``auditor import PROJECT FILE``: stream a CSV or JSONL file of labels into a project.

The file is read in batches of AUDITOR_IMPORT_BATCH_SIZE rows (bounded memory) and written in
one transaction: a file with any bad row writes nothing, and the report names the bad rows.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from auditor.cli._common import fail
from auditor.config import get_settings
from auditor.ingestion.errors import FileFormatError
from auditor.ingestion.readers import LabelFileReader
from auditor.services import ServiceError
from auditor.services.ingest import ImportResult, import_batches
from auditor.storage.db import make_engine
from auditor.storage.repositories import WriteConflict
from auditor.storage.unit_of_work import UnitOfWork


class FileFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


def summary(path: Path, result: ImportResult) -> str:
    if not result.rejected:
        return (
            f"{path.name}: {result.rows} rows, {result.inserted} inserted, "
            f"{result.duplicates} duplicates, 0 rejected"
        )
    lines = [f"  {error}" for error in result.errors]
    if result.error_count > len(result.errors):
        lines.append(f"  ... and {result.error_count - len(result.errors)} more")
    lines.append(
        f"{path.name}: {result.rows} rows, {result.bad_rows} rejected "
        f"({result.error_count} errors); nothing was imported"
    )
    return "\n".join(lines)


def run_import(
    project: str, path: Path, file_format: str | None = None, batch_size: int | None = None
) -> ImportResult:
    """Import ``path`` into ``project`` with a progress bar when stderr is a terminal."""
    settings = get_settings()
    reader = LabelFileReader(path, batch_size or settings.import_batch_size, file_format)
    uow = UnitOfWork(make_engine(settings.database_url))
    if not sys.stderr.isatty():
        return import_batches(uow, project, reader)
    with typer.progressbar(length=reader.size, label=path.name, file=sys.stderr) as bar:
        done = 0

        def advance(_: ImportResult) -> None:
            nonlocal done
            bar.update(reader.position - done)
            done = reader.position

        return import_batches(uow, project, reader, on_batch=advance)


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_(
        project: str = typer.Argument(..., help="Project slug."),
        path: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True),
        file_format: FileFormat | None = typer.Option(
            None, "--format", help="Default: from the extension (.csv, .jsonl, .ndjson)."
        ),
        batch_size: int | None = typer.Option(
            None, min=1, help="Rows per batch (default AUDITOR_IMPORT_BATCH_SIZE)."
        ),
    ) -> None:
        """Import labels in long format: columns item, rater, label, and optionally
        session, labeled_at, rater_kind, key."""
        try:
            result = run_import(project, path, file_format, batch_size)
        except (FileFormatError, ServiceError, WriteConflict) as error:
            fail(str(error))
        if result.rejected:
            typer.echo(summary(path, result), err=True)
            raise typer.Exit(1)
        typer.echo(summary(path, result))
