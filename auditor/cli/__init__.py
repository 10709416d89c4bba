"""The ``auditor`` command.

Each module of this package adds its own commands through ``register(app)``, so command
groups are written and reviewed apart. A module is imported when one of its commands runs, not
at start-up: the modules pull in SQLAlchemy, NumPy, FastAPI... (about a second), which
``auditor --help`` or a typo should not wait for. ``COMMANDS`` names each top-level command's
module and the line ``auditor --help`` shows for it; tests/unit/test_cli_cold_start.py holds
it to what the modules register. Shell code only: parse arguments, call one service function,
render the result.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from auditor.cli._common import errors_shown
from auditor.cli._remote import KEY, URL, remote_for, set_remote

if TYPE_CHECKING:
    from typer import _click as click

    from auditor.storage.presence import MissingDatabase

# Top-level command -> (module of this package that registers it, its line in `--help`).
# A new command: add it here (its module is found by this name).
COMMANDS: dict[str, tuple[str, str]] = {
    "project": ("projects", "Projects and their categories."),
    "import": (
        "imports",
        "Import labels in long format: columns item, rater, label, and optionally session, "
        "labeled_at, rater_kind, key.",
    ),
    "imports": ("import_admin", "A project's imports: list, show, revert."),
    "stats": ("stats", "Every agreement measure of one label file (no database)."),
    "recompute": ("recompute", "Recompute a project's dirty scopes now and write their snapshots."),
    "history": ("recompute", "The values of one metric over time, one row per snapshot."),
    "snapshot": (
        "recompute",
        'One snapshot as JSON: the `auditor stats --json` shape plus a "snapshot" object.',
    ),
    "run": (
        "recompute",
        "Embedded scheduler: scan for dirty projects and recompute them on a timer.",
    ),
    "report": (
        "report",
        "Write a project's reliability report: HTML with inline charts, and/or PNG plots.",
    ),
    "repeats": ("repeats", "Hidden repeats: plan them, watch their coverage."),
    "alerts": ("alerts", "Alert rules, channels, silences and states."),
    "keys": ("keys", "API keys of a project."),
    "label-studio": (
        "label_studio",
        "Label Studio: settings, sync, and hidden repeats as its tasks.",
    ),
    "serve": (
        "serve",
        "Serve the HTTP API and the dashboard. Without AUDITOR_BROKER_URL (embedded mode) the "
        "same process recomputes dirty projects every AUDITOR_SCAN_INTERVAL_SECONDS.",
    ),
    "db": ("db", "Database schema: upgrade, downgrade, check."),
    "demo": (
        "demo",
        "Simulate a labeling project for DAYS days and show reliability over time.",
    ),
    "version": ("version", "Print the code version recorded in every snapshot."),
}

# Commands that do not read AUDITOR_DATABASE_URL's database (``db`` creates it, ``demo``
# writes its own, ``stats`` reads a file).
NO_DATABASE = frozenset({"db", "demo", "stats", "version"})


@cache
def load_module_commands(module: str) -> dict[str, click.Command]:
    """The top-level commands ``auditor.cli.<module>`` registers, by name (imports it)."""
    registered = typer.Typer()
    importlib.import_module(f"{__name__}.{module}").register(registered)
    return dict(typer.main.get_group(registered).commands)


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


class _Root(TyperGroup):
    """The root group. It lists ``COMMANDS`` without importing their modules and loads a
    command's module when it runs. Before a command opens the database, a missing one is
    named, never created (SQLite would create an empty file on connect, and the command
    would then fail on a missing table). Every command's ``auditor.errors`` are shown by one
    handler (``errors_shown``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # The help listing asks for every command: a stand-in with its line of help.
        if cmd_name not in COMMANDS:
            return None
        return TyperCommand(cmd_name, help=COMMANDS[cmd_name][1])

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None:  # the one that runs: the real one
            command = load_module_commands(COMMANDS[name][0])[name]
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        args = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        source = ctx.get_parameter_source("url")
        given = getattr(source, "name", None) == "COMMANDLINE"  # not from AUDITOR_URL
        remote = remote_for(args, ctx.params.get("url"), ctx.params.get("key"), given)
        set_remote(remote)  # a read command asks for it (auditor.cli._remote)
        if remote is None and args and args[0] in COMMANDS and _opens_the_database(args, ctx):
            from auditor.config import get_settings
            from auditor.storage.presence import find_missing_database

            missing = find_missing_database(get_settings().database_url)
            if missing is not None:
                message = missing_database_message(missing)
                typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
                raise typer.Exit(2)
            _require_current_schema(get_settings().database_url)
        with errors_shown():  # every command's auditor.errors, in one place
            return super().invoke(ctx)


def _require_current_schema(url: str) -> None:
    """A schema behind the code is one line and exit 1 (``auditor db upgrade``), before the
    command's first query would fail on a missing column."""
    from auditor.storage.db import make_engine
    from auditor.storage.revision import SchemaOutOfDate, require_current_schema

    engine = make_engine(url)
    try:
        require_current_schema(engine)
    except SchemaOutOfDate as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1) from None
    finally:
        engine.dispose()


def _opens_the_database(args: list[str], ctx: click.Context) -> bool:
    """Whether ``auditor ARGS`` reads the configured database: not ``--help``, not a
    group's help (``auditor project``), not a command of ``NO_DATABASE``."""
    name = args[0]
    if ctx.resilient_parsing or name in NO_DATABASE or {"--help", "-h"} & set(args):
        return False
    command = load_module_commands(COMMANDS[name][0])[name]
    return not (hasattr(command, "list_commands") and len(args) == 1)  # a group's help


def _root_options(url: str | None = URL, key: str | None = KEY) -> None:
    """The root's options: a remote service for the read commands (``_Root.invoke`` hands
    them over; Typer builds a group from a callback, its commands listed by ``_Root``)."""


app = typer.Typer(
    cls=_Root,
    callback=_root_options,
    name="auditor",
    help="Annotation audit service: how far raters agree beyond chance, and for how long.\n\n"
    "The database is AUDITOR_DATABASE_URL (default: sqlite:///auditor.db in the current "
    "directory; e.g. postgresql+psycopg://user:password@host/db); every AUDITOR_* setting is "
    "in the README's Configuration section.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    # A wrong URL, a server that is down or a database never created is the user's to fix:
    # one line naming the URL (password masked), instead of a driver traceback; exit 2 for a
    # database that does not exist (as a missing file), 1 otherwise. Anything else raises.
    if sys.argv[1:2] == ["stats"] and "numpy" not in sys.modules:
        # The products of `auditor stats` are skinny ((items, raters) @ (raters, K)): the
        # thread per core OpenBLAS starts for each costs more CPU than it saves (0.2-0.4 s of
        # 1.3 s for 1M labels on 2 busy cores). Results may differ from a threaded run in the
        # last bits, as they do between machines of different core counts.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        if sys.argv[1:2] == ["stats"]:
            _run_and_leave()
        app()
    except Exception as error:
        from auditor.errors import DatabaseBusy, DatabaseUnavailable
        from auditor.storage.db import describe_database_error, missing_database_name

        # The storage layer's typed error wraps the driver's, which names what to fix.
        driver = error.__cause__ if isinstance(error, DatabaseBusy | DatabaseUnavailable) else None
        message = describe_database_error(driver or error, _configured_url())
        if message is None:
            raise
        typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
        sys.exit(2 if missing_database_name(driver or error) else 1)


def _run_and_leave() -> NoReturn:
    """Run the command, then leave without the interpreter's teardown: `auditor stats` writes
    nothing but its output and holds no connection, and tearing down NumPy, pyarrow and the
    heap of a million labels takes 0.05-0.1 s of a one-shot that takes well under a second."""
    try:
        app()
        code: int | str | None = 0
    except SystemExit as done:
        code = done.code
    except OSError as error:  # the output cannot be written (a full disk), say: one line
        where = f": {error.filename}" if error.filename else " writing the output"
        with contextlib.suppress(OSError):
            sys.stderr.write(f"error: {error.strerror or error}{where}\n")
        code = 1
    if isinstance(code, str):  # sys.exit("message"): printed, status 1, as Python does
        sys.stderr.write(code + "\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (`| head`): nothing more can be written
        code = code or 1
    os._exit(code or 0)


def _configured_url() -> str | None:
    from auditor.config import get_settings

    try:
        return get_settings().database_url
    except Exception:  # settings that do not load have their own error; name no URL then
        return None
