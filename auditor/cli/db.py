"""``auditor db``: bring the database given by AUDITOR_DATABASE_URL to the code's schema."""

from __future__ import annotations

import typer

from auditor.cli._common import confirm, fail
from auditor.config import get_settings
from auditor.storage import migrate
from auditor.storage.db import display_url
from auditor.storage.presence import sqlite_file
from auditor.storage.revision import SchemaOutOfDate


def register(app: typer.Typer) -> None:
    db = typer.Typer(help="Database schema: upgrade, downgrade, check.", no_args_is_help=True)
    app.add_typer(db, name="db")

    @db.command("upgrade")
    def upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
        """Apply migrations up to REVISION (default: the newest)."""
        url = get_settings().database_url
        try:
            migrate.upgrade(url, revision)
        except migrate.UnknownRevisionError as error:
            fail(str(error), code=2)
        typer.echo(f"database at revision {migrate.current(url)}")

    @db.command("downgrade")
    def downgrade(
        revision: str = typer.Argument(..., help="Target revision, or 'base'."),
        yes: bool = typer.Option(False, "--yes", help="Do not ask (needed off a terminal)."),
    ) -> None:
        """Undo migrations down to REVISION ('base' drops every table)."""
        url = get_settings().database_url
        try:
            migrate.check_revision(revision)
            confirm(f"Downgrade the database to {revision}? Dropped tables lose their rows.", yes)
            migrate.downgrade(url, revision)
        except migrate.UnknownRevisionError as error:
            fail(str(error), code=2)
        typer.echo(f"database at revision {migrate.current(url) or 'base'}")

    @db.command("check")
    def check() -> None:
        """Fail when the database is behind the code or differs from the models."""
        url = get_settings().database_url
        path = sqlite_file(url)
        if path is not None and not path.is_file():  # a check must not create the file
            fail(
                f"no database at {display_url(url)} (no file {path}): run `auditor db "
                "upgrade` to create it, or set AUDITOR_DATABASE_URL to the one you meant"
            )
        current, head = migrate.current(url), migrate.head()
        if current != head:
            fail(str(SchemaOutOfDate(current or "base", head)))  # the server's and workers' words
        try:
            migrate.check(url)
        except migrate.SchemaDriftError as error:
            fail(f"schema differs from the models: {error}")
        bad = migrate.times_out_of_range(url)
        if bad:
            listing = "; ".join(f"{table}.{column}: {rows} rows" for table, column, rows in bad)
            fail(f"stored times outside [1970-01-01, 2100-01-01) UTC: {listing}")
        typer.echo(f"database at revision {current}, no drift, every stored time in range")
