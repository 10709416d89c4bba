"""Is the database's schema the one this code needs? One ``SELECT`` of ``alembic_version``
per database URL and process, before a command or the server uses the database, so that a
database left behind by an upgrade of the code reads "run `auditor db upgrade`" instead of
"no such column ..." on the first query.

The code's revision is read from the names of ``migrations/versions`` (``NNNN_*.py``; the
chain is linear and each revision id is its file's number): no Alembic import, no parsing of
the migration scripts. ``tests/integration/test_schema_revision.py`` holds it to Alembic's head.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from auditor.errors import AuditorError

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
_REVISION_FILE = re.compile(r"^(\d{4})_\w+\.py$")
_DOWN_REVISION = re.compile(r"^down_revision[^=]*=\s*[\"'](\d{4})[\"']", re.MULTILINE)

# URLs whose schema was found current in this process: checked once, not per command.
_current: set[str] = set()


class SchemaOutOfDate(AuditorError):
    """The database's schema is at an older revision than the code needs."""

    code = "schema_out_of_date"

    def __init__(self, found: str, needed: str) -> None:
        super().__init__(
            f"the database is at revision {found}, this code needs {needed}: "
            "run `auditor db upgrade`"
        )
        self.found = found
        self.needed = needed


def code_revision() -> str | None:
    """The newest revision of ``migrations/versions``; None when the directory is not there
    (an installation without the migrations: nothing to compare with)."""
    versions = MIGRATIONS_DIR / "versions"
    if not versions.is_dir():
        return None
    found = [m.group(1) for p in versions.iterdir() if (m := _REVISION_FILE.match(p.name))]
    if not found:
        return None
    # The head: the revision no other one revises (ids need not grow along the chain).
    below = {
        m.group(1)
        for p in versions.iterdir()
        if _REVISION_FILE.match(p.name)
        and (m := _DOWN_REVISION.search(p.read_text(encoding="utf-8")))
    }
    heads = sorted(set(found) - below)
    return heads[-1] if heads else max(found)


def database_revision(engine: Engine) -> str | None:
    """The revision in ``alembic_version``; None when there is no such table or row (a schema
    made without Alembic, or none: the first query says what is missing)."""
    try:
        with engine.connect() as connection:
            row = connection.execute(text("SELECT version_num FROM alembic_version")).first()
    except SQLAlchemyError:
        return None
    return None if row is None else str(row[0])


def require_current_schema(engine: Engine) -> None:
    """Raise ``SchemaOutOfDate`` when the database behind ``engine`` is at an older revision
    than the code. A database that cannot be read, has no revision or is newer than the code
    (another deployment upgraded it first) passes: the first query reports what is wrong."""
    key = engine.url.render_as_string(hide_password=False)
    if key in _current:
        return
    needed = code_revision()
    found = database_revision(engine)
    if needed is None or found is None:
        return
    if found.isdigit() and len(found) == len(needed) and found < needed:
        raise SchemaOutOfDate(found, needed)
    _current.add(key)
