"""Helpers shared by the command modules: errors that name what went wrong, and exit codes."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code`` (1: bad input, 2: usage)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code)
