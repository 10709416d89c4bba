"""The one translation of the drivers' errors into ``auditor.errors``, where they leave storage.

psycopg, sqlite3, ADBC and SQLAlchemy each raise their own types; the layers above see three
typed errors instead, decided by type and code along the cause chain (``auditor.storage.db``'s
``is_lock_timeout`` and ``is_connection_error``, ``repositories.is_write_conflict``), never by
message text:

    DatabaseBusy          the write lock was not had in time     (SQLITE_BUSY, 55P03)
    DatabaseUnavailable   the database cannot be reached          (refused, 08xxx, 57P01-03)
    WriteConflict         a concurrent transaction got in the way (deadlock, a client key)

The unit of work wraps every door with ``driver_errors_translated`` (its transactions, the
project lock, the columnar load, the outbox claim, the staging connection), so the shells map
by type alone. Any other driver error (a bug, a missing table) leaves as it came: it is not the
caller's to handle.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from auditor.errors import AuditorError, DatabaseBusy, DatabaseUnavailable, WriteConflict
from auditor.storage.db import is_connection_error, is_lock_timeout
from auditor.storage.repositories import is_write_conflict


def translated(error: BaseException) -> AuditorError | None:
    """The typed error for a driver's ``error`` (its message the driver's), or None when it is
    none of the three (or already one of ours)."""
    if isinstance(error, AuditorError):
        return None
    if is_lock_timeout(error):
        return DatabaseBusy(str(error))
    if is_connection_error(error):
        return DatabaseUnavailable(str(error))
    if is_write_conflict(getattr(error, "orig", None) or error):
        return WriteConflict(str(getattr(error, "orig", None) or error))
    return None


@contextmanager
def driver_errors_translated() -> Iterator[None]:
    """Raise the typed error (``from`` the driver's) for a driver error that leaves the block."""
    try:
        yield
    except Exception as error:
        typed = translated(error)
        if typed is None:
            raise
        raise typed from error
