"""The ``auditor`` command.

Each module of this package adds its own commands through ``register(app)``; the modules are
found at start-up so that command groups can be written and reviewed independently.
Shell code only: parse arguments, call one service function, render the result.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from auditor.cli._common import errors_shown
from auditor.config import get_settings
from auditor.storage.db import describe_database_error, missing_database_name
from auditor.storage.presence import MissingDatabase, find_missing_database

# Commands that do not read AUDITOR_DATABASE_URL's database (``db`` creates it, ``demo``
# writes its own, ``stats`` reads a file).
NO_DATABASE = frozenset({"db", "demo", "stats", "version"})


def missing_database_message(missing: MissingDatabase) -> str:
    """One line: the URL and file tried, where that URL came from, and the likelier way out
    first (no URL set: point it at your database; a URL set: create the database there)."""
    where = missing.url if missing.path is None else f"{missing.url}, file {missing.path}"
    explicit = "AUDITOR_DATABASE_URL" in os.environ
    origin = (
        "(from AUDITOR_DATABASE_URL)"
        if explicit
        else "(the default, as AUDITOR_DATABASE_URL is unset)"
    )
    found = {
        "file": "no such file",
        "database": "the server has no such database",
    }.get(missing.missing, "no auditor schema in it")
    point = (
        "set AUDITOR_DATABASE_URL to your database (after `make demo`: "
        "sqlite:///auditor-demo.db in the repository directory)"
    )
    create = missing.advice or "run `auditor db upgrade` to create it there"
    advice = f"{create}, or {point}" if explicit else f"{point}, or {create}"
    return (
        f"no auditor database at {where} {origin}: {found}; nothing was created. To fix: {advice}"
    )


class _DatabaseFirst(TyperGroup):
    """The root group: before a command opens the database, a missing one is named, never
    created (SQLite would create an empty file on connect, and the command would then fail
    on a missing table)."""

    def invoke(self, ctx: typer.Context) -> Any:
        args = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        command = self.get_command(ctx, args[0]) if args else None
        skip = (
            command is None
            or ctx.resilient_parsing
            or args[0] in NO_DATABASE
            or bool({"--help", "-h"} & set(args))
            or (hasattr(command, "list_commands") and len(args) == 1)  # a group's help
        )
        if not skip:
            missing = find_missing_database(get_settings().database_url)
            if missing is not None:
                message = missing_database_message(missing)
                typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
                raise typer.Exit(2)
        with errors_shown():  # every command's auditor.errors, in one place
            return super().invoke(ctx)


app = typer.Typer(
    cls=_DatabaseFirst,
    name="auditor",
    help="Annotation audit service: how far raters agree beyond chance, and for how long.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_commands()


def main() -> None:
    # A wrong URL, a server that is down or a database never created is the user's to fix:
    # one line naming the URL (password masked), instead of a driver traceback; exit 2 for a
    # database that does not exist (as a missing file), 1 otherwise. Anything else raises.
    try:
        app()
    except Exception as error:
        message = describe_database_error(error, _configured_url())
        if message is None:
            raise
        typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
        sys.exit(2 if missing_database_name(str(error)) else 1)


def _configured_url() -> str | None:
    try:
        return get_settings().database_url
    except Exception:  # settings that do not load have their own error; name no URL then
        return None
