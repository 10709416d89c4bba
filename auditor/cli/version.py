"""``auditor version``."""

from __future__ import annotations

import typer

from auditor import __version__


def register(app: typer.Typer) -> None:
    @app.command("version")
    def version() -> None:
        """Print the code version recorded in every snapshot."""
        typer.echo(__version__)
