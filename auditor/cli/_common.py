"""Helpers shared by the command modules: errors that name what went wrong, exit codes, the
unit of work on the configured database, and times given as options.

Kept light: ``auditor --help`` imports every command module, and each imports this one, so
nothing here loads SQLAlchemy or the services until a command runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NoReturn

import typer

from auditor.errors import AuditorError, DatabaseBusy, DatabaseUnavailable

if TYPE_CHECKING:
    from auditor.storage.unit_of_work import UnitOfWork

# 1: the input or the stored state is wrong (every auditor.errors error); 2: usage.
USER_ERROR = 1


def count(n: int, word: str, plural: str | None = None) -> str:
    """``1 row``, ``2 rows``, ``0 rows`` (issue 27: "1 rows")."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def fail(message: str, code: int = USER_ERROR) -> NoReturn:
    """Print an error to stderr and exit with ``code`` (1: bad input, 2: usage)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code)


@contextmanager
def errors_shown() -> Iterator[None]:
    """The CLI's one mapping of ``auditor.errors``: any of them that a command lets through
    is one line on stderr (its message, which names what is wrong) and exit 1. Wraps every
    command (``auditor.cli``); a command catches an error itself only to say more."""
    try:
        yield
    except (DatabaseBusy, DatabaseUnavailable):
        raise  # explained with the URL to check by ``auditor.cli.main``
    except AuditorError as error:
        fail(str(error), USER_ERROR)


def unit_of_work(read_only: bool = False) -> UnitOfWork:
    """A unit of work on ``AUDITOR_DATABASE_URL`` (one new engine: a command is one process)."""
    from auditor.config import get_settings
    from auditor.storage.db import make_engine
    from auditor.storage.unit_of_work import UnitOfWork

    return UnitOfWork(make_engine(get_settings().database_url), read_only=read_only)


def _wall_clock() -> datetime:
    return datetime.now(UTC)


def command_clock(ctx: typer.Context) -> Callable[[], datetime]:
    """The clock a command reads the time from: one the caller passed as the context object
    (``CliRunner().invoke(app, args, obj=clock)``: a test steps time instead of sleeping),
    else the wall clock."""
    return ctx.obj if callable(ctx.obj) else _wall_clock


def shown_input(text: str, limit: int = 40) -> str:
    """A short, escaped excerpt of what was typed, for an error message."""
    excerpt = text[:limit].encode("unicode_escape").decode("ascii")
    return repr(excerpt) + ("..." if len(text) > limit else "")


def parse_time(text: str, option: str) -> datetime:
    """An RFC 3339 time given to ``option`` (``auditor.domain.TIMESTAMP_FORMS``); a time
    without a zone is UTC. Exits 2 when unreadable."""
    from auditor.domain import parse_timestamp, time_out_of_range

    try:
        moment = parse_timestamp(text.strip())
    except ValueError as error:
        fail(f"{option}: not an ISO 8601 time: {shown_input(text)}: {error}", 2)
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    out_of_range = time_out_of_range(moment)
    if out_of_range is not None:
        fail(f"{option}: {out_of_range}", 2)
    return moment


def confirm(question: str, yes: bool) -> None:
    """A destructive command's guard: ``--yes`` goes ahead; on a terminal the person is
    asked; otherwise (a script, a pipe) it refuses with exit 2 rather than guess."""
    if yes:
        return
    if not sys.stdin.isatty():
        fail(f"{question} Not on a terminal: add --yes to confirm.", 2)
    if not typer.confirm(question, default=False):
        fail("cancelled: nothing was changed", 1)
