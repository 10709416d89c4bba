"""Engine factory, the declarative base with its naming convention, and the UTC time type.

Two backends, one schema:

- PostgreSQL through ``postgresql+psycopg://`` (the distributed deployment);
- SQLite (the embedded default). Every SQLite connection gets ``PRAGMA foreign_keys=ON``
  (SQLite ignores foreign keys otherwise), WAL journaling (readers do not block the writer)
  and a busy timeout (a second writer waits instead of failing at once).

Time: every timestamp column is ``UtcMicros``: an aware UTC ``datetime`` in Python, stored as
integer microseconds since the Unix epoch in a BIGINT on both backends. Integers order and
compare the same everywhere (SQLite has no time type) and load straight into NumPy int64
(``LabelArrays.order``) without parsing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

from sqlalchemy import BigInteger, Integer, MetaData, Table, create_engine, event
from sqlalchemy.engine import CursorResult, Engine, Result, make_url
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeDecorator

from auditor.domain import from_micros, to_micros

SQLITE_BUSY_TIMEOUT_MS = 30_000

# Stable constraint names: migrations can drop and alter constraints by name on both backends
# (SQLite batch mode needs names to recreate tables).
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# A BIGINT primary key that is an INTEGER (a rowid alias, hence autoincrementing) on SQLite.
BigId = BigInteger().with_variant(Integer, "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    # Every model here is mapped to a Table; SQLAlchemy declares the wider FromClause.
    __table__: ClassVar[Table]


def utc_now() -> datetime:
    return datetime.now(UTC)


class UtcMicros(TypeDecorator[datetime]):
    """Aware UTC datetime <-> BIGINT microseconds since the epoch (see the module docstring).

    Integers pass through unchanged on the way in, so bulk paths can bind precomputed values.
    """

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> int | None:
        if value is None or isinstance(value, int):
            return value
        return to_micros(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else from_micros(int(value))


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url`` with the per-connection setup of this module's docstring.

    On SQLite, transactions start with ``BEGIN`` emitted by us rather than by the driver, so
    that ``BEGIN IMMEDIATE`` can be asked for through the execution option
    ``sqlite_begin="IMMEDIATE"`` (the unit of work does this for writes: a writer takes the
    write lock up front and waits for it, instead of failing when it upgrades a read).
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        connect_args = kwargs.pop("connect_args", {})
        # psycopg prepares a statement after 5 runs, and PostgreSQL may then keep a generic
        # plan made while a table was small: a lookup by key became a sequential scan for
        # the rest of a long import (27 s instead of 2 s for 50k new items). Unprepared
        # statements are planned for their parameters and the table as it is now. (Not
        # plan_cache_mode=force_custom_plan: that also re-plans every foreign-key check.)
        connect_args.setdefault("prepare_threshold", None)
        return create_engine(parsed, connect_args=connect_args, **kwargs)

    database = parsed.database or ""
    in_memory = database in ("", ":memory:") or "mode=memory" in str(parsed)
    connect_args = kwargs.pop("connect_args", {})
    connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
    connect_args.setdefault("check_same_thread", False)
    if in_memory:
        kwargs.setdefault("poolclass", StaticPool)
    engine = create_engine(parsed, connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the sqlite3 module (see the docstring).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def missing_database_name(error: BaseException | str) -> str | None:
    """The database a server said does not exist (PostgreSQL's FATAL at connect, which
    psycopg raises without an SQLSTATE), or None for any other error."""
    match = re.search(r'database "([^"]+)" does not exist', str(error))
    return match.group(1) if match else None


def create_database_advice(url: str, name: str) -> str:
    """How to create a missing database ``name`` on the server of ``url``."""
    parsed = make_url(url)
    host = f"-h {parsed.host} " if parsed.host else ""
    port = f"-p {parsed.port} " if parsed.port else ""
    user = f"-U {parsed.username} " if parsed.username else ""
    return f"create it (`createdb {host}{port}{user}{name}`), then run `auditor db upgrade`"


def describe_database_error(error: BaseException, url: str | None = None) -> str | None:
    """A one-line explanation of a database error a user can fix (bad URL, server down,
    database or schema not created), naming ``url`` with its password masked, or None for
    anything else (a bug: let it raise with its traceback)."""
    from sqlalchemy.exc import ArgumentError, OperationalError, ProgrammingError

    if isinstance(error, ArgumentError):
        return f"AUDITOR_DATABASE_URL is not a database URL: {error}"
    shown = "AUDITOR_DATABASE_URL" if url is None else f"{display_url(url)} (AUDITOR_DATABASE_URL)"
    if isinstance(error, OperationalError | ProgrammingError):
        text = str(error.orig) if error.orig is not None else str(error)
        first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
        missing_table = "no such table" in text or ("relation" in text and "does not exist" in text)
        if missing_table:
            return (
                f"the database at {shown} has no auditor schema yet ({first}): "
                "run `auditor db upgrade`"
            )
        name = missing_database_name(text)
        if name is not None:
            create = "create it, then run `auditor db upgrade`"
            if url is not None:
                create = create_database_advice(url, name)
            return (
                f'no database "{name}" on the server of {shown}: {create}, '
                "or set AUDITOR_DATABASE_URL to an existing one"
            )
        if isinstance(error, OperationalError):
            return (
                f"cannot use the database at {shown}: {first}; check that the server is up "
                "and the URL right, or set AUDITOR_DATABASE_URL"
            )
    return None


def display_url(url: str) -> str:
    """``url`` with its password masked, for banners and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL fails later with its own message; never echo it
        return "<unparsable AUDITOR_DATABASE_URL>"


def _chain(error: BaseException) -> list[BaseException]:
    """``error``, the driver's error it wraps (``.orig``) and its causes, as a service or
    SQLAlchemy may wrap it; bounded, never looping on a cycle."""
    seen: list[BaseException] = []
    pending: list[BaseException | None] = [error]
    while pending and len(seen) < 20:
        current = pending.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        pending += [getattr(current, "orig", None), current.__cause__, current.__context__]
    return seen


# sqlite3's primary result codes for "another connection holds the lock" (SQLITE_BUSY after
# the busy timeout, SQLITE_LOCKED for a table lock); an extended code keeps them in its low byte.
_SQLITE_BUSY_CODES = (5, 6)


def is_lock_timeout(error: BaseException) -> bool:
    """The write lock could not be had in time: SQLite's SQLITE_BUSY/SQLITE_LOCKED after the
    busy timeout, PostgreSQL's lock_not_available (55P03), whether SQLAlchemy wrapped the
    driver's error or the driver raised it itself (the labels COPY runs on the driver).
    Decided by the error's type and code, never its text. Retrying later succeeds; the caller
    answers "busy" (HTTP 503 with Retry-After), never an internal error."""
    import sqlite3

    import psycopg

    for seen in _chain(error):
        if isinstance(seen, psycopg.errors.LockNotAvailable):
            return True
        if isinstance(seen, sqlite3.OperationalError):
            code = getattr(seen, "sqlite_errorcode", None)
            if code is not None and code & 0xFF in _SQLITE_BUSY_CODES:
                return True
    return False


# SQLSTATE class 08 (connection exception) and the server shutting down (admin_shutdown,
# crash_shutdown, cannot_connect_now).
_UNAVAILABLE_STATES = ("57P01", "57P02", "57P03")


# How long a client should wait before retrying after is_connection_error: the API's JSON 503
# and the dashboard's HTML 503 both say it.
UNAVAILABLE_RETRY_AFTER_SECONDS = 10


def is_connection_error(error: BaseException) -> bool:
    """The database cannot be reached: the connect was refused or timed out, or the server
    went away or is shutting down (checked along the chain of causes, as a service may wrap
    it). Decided by type and code, never by message text: SQLAlchemy's invalidated
    connection, a SQLSTATE of class 08 or 57P01-57P03, and psycopg's ``OperationalError``
    without a SQLSTATE (the server never answered: refused, timed out, closed; any error the
    server itself reports carries one), and the same for ADBC's (the columnar load's driver).
    Retrying later may succeed; the caller answers "unavailable" (HTTP 503), never an
    internal error."""
    import adbc_driver_manager
    import psycopg
    from sqlalchemy.exc import DBAPIError

    for seen in _chain(error):
        if isinstance(seen, DBAPIError) and seen.connection_invalidated:
            return True
        if isinstance(seen, psycopg.OperationalError | adbc_driver_manager.OperationalError):
            state = seen.sqlstate or ""
            if not state or state.startswith("08") or state in _UNAVAILABLE_STATES:
                return True
    return False


def affected(result: Result[Any]) -> int:
    """Rows an UPDATE, DELETE or INSERT ... SELECT touched (the cursor's rowcount; the typed
    Result of Session.execute does not declare it)."""
    return cast("CursorResult[Any]", result).rowcount
