"""Is there an auditor database at a URL? Asked before a command reads one, without creating
anything: SQLite creates a missing file on connect, so a read run from the wrong directory
used to leave an empty stray ``.db`` behind and then fail on a missing table."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from auditor.storage.db import (
    create_database_advice,
    display_url,
    make_engine,
    missing_database_name,
)

# A table every revision since the first has; its absence means "never upgraded".
SCHEMA_TABLE = "projects"


@dataclass(frozen=True)
class MissingDatabase:
    """What was tried: the URL (password masked), the SQLite file if any, and what is
    missing: ``file`` (nothing there), ``database`` (the server has no database of that
    name) or ``schema`` (a database without our tables)."""

    url: str
    path: Path | None
    missing: str
    advice: str = ""  # how to create what is missing, when it is not `auditor db upgrade`


def sqlite_file(url: str) -> Path | None:
    """The absolute path of a SQLite file URL; None for other backends and in-memory ones."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or "mode=memory" in url:
        return None
    if database.startswith("file:"):
        database = database[len("file:") :].split("?", 1)[0]
    return Path(database).expanduser().resolve()


def _sqlite_has_schema(path: Path) -> bool:
    # Read-only and through the standard module: no WAL switch, no -wal/-shm files left over.
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        row = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SCHEMA_TABLE,)
        ).fetchone()
        return row is not None
    finally:
        connection.close()


def find_missing_database(url: str) -> MissingDatabase | None:
    """None when ``url`` holds an auditor schema, or when the question cannot be answered
    here (an unparsable URL, a server that is down, a file that is not a database): the
    command then fails on its first query with its own message."""
    try:
        path = sqlite_file(url)
        shown = display_url(url)
        if path is not None:
            if not path.is_file():
                return MissingDatabase(shown, path, "file")
            return None if _sqlite_has_schema(path) else MissingDatabase(shown, path, "schema")
        if make_url(url).get_backend_name() == "sqlite":
            return None  # in memory: nothing to find
        engine = make_engine(url)
        try:
            with engine.connect() as connection:
                present = inspect(connection).has_table(SCHEMA_TABLE)
        except OperationalError as error:
            # The server answers but has no such database: as missing as a SQLite file.
            # A server that is down is not a missing database: the command says so itself.
            name = missing_database_name(str(error.orig))
            if name is None:
                raise
            return MissingDatabase(shown, None, "database", create_database_advice(url, name))
        finally:
            engine.dispose()
        return None if present else MissingDatabase(shown, None, "schema")
    except (SQLAlchemyError, sqlite3.Error, ValueError, OSError):
        return None
