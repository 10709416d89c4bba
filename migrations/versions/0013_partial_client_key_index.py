"""The unique (project, client key) rule of labels becomes a partial unique index: only
labels that have a key are in it.

Most labels have no key, and the constraint's index held one (project, NULL) entry for each:
never looked up (NULLs are never equal, so they are never a conflict), but written with every
label. A bulk import of 10M labels into a project holding 10M spent 13 of its 75 s of the
labels INSERT maintaining them. The partial index gives the same rule (a key is unique in its
project; any number of labels without one) and keeps its name, so a violation reads as
before. Lookups by key (``client_key = ...`` or ``IN (...)``) imply ``client_key IS NOT
NULL``, so both databases use the partial index for them.

SQLite cannot drop a constraint written in ``CREATE TABLE``: labels is rebuilt from its
stored definition minus (or, on downgrade, plus) that clause, and its indexes, its triggers
(the reference checks of migration 0001, which an alembic batch rebuild would lose) and its
AUTOINCREMENT counter (ids are watermarks: they must never go back) are restored as they
were.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from collections.abc import Callable

from alembic import op
from sqlalchemy import text

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None

_NAME = "uq_labels_project_id_client_key"
_CLAUSE = f"CONSTRAINT {_NAME} UNIQUE (project_id, client_key)"


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite_labels(_without_clause)
    else:
        op.drop_constraint(_NAME, "labels", type_="unique")
    op.execute(
        f"CREATE UNIQUE INDEX {_NAME} ON labels (project_id, client_key) "
        "WHERE client_key IS NOT NULL"
    )


def downgrade() -> None:
    op.execute(f"DROP INDEX {_NAME}")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite_labels(_with_clause)
    else:
        op.create_unique_constraint(_NAME, "labels", ["project_id", "client_key"])


def _without_clause(create: str) -> str:
    start = create.find(_CLAUSE)
    comma = create.rfind(",", 0, start)
    if start < 0 or comma < 0:
        raise RuntimeError(f"labels' definition has no {_NAME} clause to drop: {create}")
    return create[:comma] + create[start + len(_CLAUSE) :]


def _with_clause(create: str) -> str:
    end = create.rstrip().rfind(")")
    return create[:end].rstrip() + f", \n\t{_CLAUSE}\n)"


def _rebuild_sqlite_labels(change: Callable[[str], str]) -> None:
    """SQLite's documented way to change a table: a new table from the changed definition,
    the rows copied, the old one dropped, the new one renamed."""
    bind = op.get_bind()
    create = bind.execute(
        text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'labels'")
    ).scalar_one()
    # Indexes and triggers on labels (not the automatic index of the UNIQUE clause, whose sql
    # is NULL); the new unique index is made by the caller.
    attached = [
        sql
        for (sql,) in bind.execute(
            text(
                "SELECT sql FROM sqlite_master WHERE tbl_name = 'labels' "
                "AND type IN ('index', 'trigger') AND sql IS NOT NULL AND name <> :unique "
                "ORDER BY type, name"
            ),
            {"unique": _NAME},
        )
    ]
    counter = bind.execute(
        text("SELECT seq FROM sqlite_sequence WHERE name = 'labels'")
    ).scalar_one_or_none()
    # "CREATE TABLE labels (" as created, "CREATE TABLE \"labels\" (" once renamed.
    columns = create.find("(")
    if columns < 0 or create[:columns].split() not in (
        ["CREATE", "TABLE", "labels"],
        ["CREATE", "TABLE", '"labels"'],
    ):
        raise RuntimeError(f"unexpected definition of labels: {create}")
    op.execute("CREATE TABLE labels_rebuilt " + change(create[columns:]))
    op.execute("INSERT INTO labels_rebuilt SELECT * FROM labels")
    op.execute("DROP TABLE labels")
    # The guard triggers of the parent tables name labels: the legacy rename leaves them be
    # (the modern one would refuse, labels being gone for a moment).
    op.execute("PRAGMA legacy_alter_table = ON")
    op.execute("ALTER TABLE labels_rebuilt RENAME TO labels")
    op.execute("PRAGMA legacy_alter_table = OFF")
    op.execute("DELETE FROM sqlite_sequence WHERE name IN ('labels', 'labels_rebuilt')")
    if counter is not None:
        bind.execute(
            text("INSERT INTO sqlite_sequence (name, seq) VALUES ('labels', :seq)"),
            {"seq": counter},
        )
    for sql in attached:
        op.execute(sql)
