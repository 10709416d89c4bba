"""``auditor imports``: list, show and revert a project's imports (files and API batches)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from auditor.cli._common import confirm, count, unit_of_work
from auditor.cli._remote import remote_client

if TYPE_CHECKING:
    from auditor.services.ingest.imports import ImportView
    from auditor.storage.repeat_repository import Unfulfilled


def _line(view: ImportView) -> str:
    state = ""
    if view.reverted_at is not None:
        when = view.reverted_at.isoformat(timespec="seconds")
        state = f"reverted {when} ({count(view.reverted_labels or 0, 'label')})"
    return (
        f"{view.id}\t{view.created_at.isoformat(timespec='seconds')}\t{view.source}\t"
        f"{count(view.rows, 'row')}, {view.inserted} inserted, "
        f"{count(view.duplicates, 'duplicate')}\t"
        f"{view.created_by}\t{state}"
    ).rstrip()


def repeats_line(undone: Unfulfilled) -> str:
    """``3 planned repeat(s) these labels fulfilled: 2 open again, 1 expired``."""
    parts = [
        f"{count} {what}"
        for count, what in (
            (undone.reopened, "open again"),
            (undone.expired, "expired"),
            (undone.refulfilled, "fulfilled by a later label"),
        )
        if count
    ]
    return f"{undone.total} planned repeat(s) these labels fulfilled: {', '.join(parts)}"


def register(app: typer.Typer) -> None:
    imports = typer.Typer(help="A project's imports: list, show, revert.", no_args_is_help=True)
    app.add_typer(imports, name="imports")

    @imports.command("list")
    def list_(
        project: str = typer.Argument(..., help="Project slug."),
        as_json: bool = typer.Option(False, "--json", help="A JSON list of objects."),
    ) -> None:
        """Every import of a project, oldest first: id, when, source, counts, who, reverted."""
        from auditor.cli._remote_reads import remote_imports
        from auditor.services.ingest.imports import list_imports

        client = remote_client(project)
        if client is not None:
            views = remote_imports(client)
        else:
            views = list_imports(unit_of_work(read_only=True), project)
        if as_json:
            typer.echo(json.dumps([v.as_dict() for v in views], indent=2))
            return
        for view in views:
            typer.echo(_line(view))

    @imports.command("show")
    def show(
        project: str = typer.Argument(..., help="Project slug."),
        import_id: int = typer.Argument(..., help="Import id (see `auditor imports list`)."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """One import: source, content hash, counts, who, when, and whether it was reverted."""
        from auditor.cli._remote_reads import remote_imports
        from auditor.services.ingest.imports import show_import

        client = remote_client(project)
        if client is not None:
            view = remote_imports(client, import_id)[0]
        else:
            view = show_import(unit_of_work(read_only=True), project, import_id)
        data = view.as_dict()
        if as_json:
            typer.echo(json.dumps(data, indent=2))
            return
        for name, value in data.items():
            typer.echo(f"{name:<16}{'-' if value is None else value}")

    @imports.command("revert")
    def revert(
        project: str = typer.Argument(..., help="Project slug."),
        import_id: int = typer.Argument(..., help="Import id (see `auditor imports list`)."),
        yes: bool = typer.Option(False, "--yes", help="Do not ask (needed off a terminal)."),
    ) -> None:
        """Delete every label of one import, in one transaction (snapshots stay)."""
        from auditor.services.ingest.imports import revert_import, show_import

        view = show_import(unit_of_work(read_only=True), project, import_id)
        confirm(
            f"Delete the {view.inserted} label(s) of import {import_id} "
            f"({view.source}) from {project}?",
            yes,
        )
        result = revert_import(unit_of_work(), project, import_id)
        typer.echo(
            f"import {result.import_id} reverted: {result.deleted} label(s) deleted; "
            "the next recompute sees the change"
        )
        if result.repeats.total:
            typer.echo(repeats_line(result.repeats))
