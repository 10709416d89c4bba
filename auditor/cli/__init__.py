"""The ``auditor`` command.

Each module of this package adds its own commands through ``register(app)``; the modules are
found at start-up so that command groups can be written and reviewed independently.
Shell code only: parse arguments, call one service function, render the result.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from auditor.storage.db import describe_database_error

app = typer.Typer(
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
    # A wrong URL, a server that is down or a schema never created is the user's to fix:
    # one line naming it, exit 1, instead of a driver traceback. Anything else still raises.
    try:
        app()
    except Exception as error:
        message = describe_database_error(error)
        if message is None:
            raise
        typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
        sys.exit(1)
