"""Alembic environment: one migration chain for PostgreSQL and SQLite.

Run through ``auditor.storage.migrate`` (or ``auditor db upgrade``); the URL comes from the
config's ``sqlalchemy.url``, or an open connection is passed in ``config.attributes``.
SQLite runs in batch mode (table copy-and-move for ALTERs) with foreign keys off while the
tables are rebuilt, and checks them afterwards.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from auditor.storage.db import make_engine
from auditor.storage.schema import METADATA

config = context.config
# The whole schema (every models module), so that `check` compares every table.
target_metadata = METADATA


def _pragma(connection: Connection, setting: str) -> None:
    connection.connection.driver_connection.execute(f"PRAGMA {setting}")


def _run(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # PRAGMA foreign_keys is a no-op inside a transaction, and SQLAlchemy's
        # exec_driver_sql would open one (storage.db begins explicitly): set it on the raw
        # connection, before alembic begins, so a table rebuild with rows pointing at it works.
        _pragma(connection, "foreign_keys=OFF")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=sqlite,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    if sqlite:
        connection.commit()
        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        connection.commit()
        _pragma(connection, "foreign_keys=ON")
        if broken:
            raise RuntimeError(f"foreign key violations after migrating: {broken[:10]}")


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url"))
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
run_migrations_online()
