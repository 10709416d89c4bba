"""The ``auditor`` command.

Each module of this package adds its own commands through ``register(app)``; the modules are
found at start-up so that command groups can be written and reviewed independently.
Shell code only: parse arguments, call one service function, render the result.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

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
    app()
