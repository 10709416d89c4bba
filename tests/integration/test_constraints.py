"""The schema is the last line of defence: raw SQL that breaks a rule fails on both backends.

Two projects, each with a category, a rater, an item and a session; every case is one raw
statement that must be refused. The valid statements next to them succeed, so each refusal
is the constraint's doing and not a typo.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

# Project 1 owns category 1, rater 1 (and rater 3), item 1, session 1 (of rater 1);
# project 2 owns category 2, rater 2, item 2, session 2 (of rater 2).
SETUP = [
    "INSERT INTO projects (id, slug, name, created_at) VALUES (1, 'p1', 'P1', 0), "
    "(2, 'p2', 'P2', 0)",
    "INSERT INTO categories (id, project_id, position, name) VALUES (1, 1, 0, 'yes'), "
    "(2, 2, 0, 'yes')",
    "INSERT INTO raters (id, project_id, external_id, kind) VALUES (1, 1, 'ann', 'human'), "
    "(2, 2, 'ann', 'human'), (3, 1, 'bob', 'model')",
    "INSERT INTO items (id, project_id, external_id) VALUES (1, 1, 'x'), (2, 2, 'x')",
    "INSERT INTO sessions (id, project_id, rater_id, external_id, started_at, ended_at) "
    "VALUES (1, 1, 1, 's', 0, 10), (2, 2, 2, 's', 0, 10)",
    "INSERT INTO labels (id, project_id, item_id, rater_id, session_id, category_id, labeled_at, "
    "received_at, client_key) VALUES (1, 1, 1, 1, 1, 1, 5, 5, 'k')",
]

LABEL = (
    "INSERT INTO labels (project_id, item_id, rater_id, session_id, category_id, labeled_at, "
    "received_at, client_key) VALUES ({values})"
)

# Each valid statement changes one row; the count query reads 1 once the change is stored.
VALID = {
    "label": (
        LABEL.format(values="1, 1, 3, NULL, 1, 6, 6, NULL"),
        "SELECT count(*) FROM labels WHERE rater_id = 3 AND labeled_at = 6",
    ),
    "removing an item without labels": (
        "DELETE FROM items WHERE id = 2",
        "SELECT count(*) FROM items WHERE id = 1",  # only the other item is left
    ),
    "widening a session that has labels": (
        "UPDATE sessions SET ended_at = 20 WHERE id = 1",
        "SELECT count(*) FROM sessions WHERE id = 1 AND ended_at = 20",
    ),
    "taking a label out of its session": (
        "UPDATE labels SET session_id = NULL, rater_id = 3 WHERE id = 1",
        "SELECT count(*) FROM labels WHERE id = 1 AND session_id IS NULL AND rater_id = 3",
    ),
    "label in a session": (
        LABEL.format(values="1, 1, 1, 1, 1, 6, 6, 'k2'"),
        "SELECT count(*) FROM labels WHERE client_key = 'k2' AND session_id = 1",
    ),
    "another project's key space": (
        LABEL.format(values="2, 2, 2, 2, 2, 6, 6, 'k'"),
        "SELECT count(*) FROM labels WHERE client_key = 'k' AND project_id = 2",
    ),
}

BROKEN = {
    "label with another project's item": LABEL.format(values="1, 2, 1, NULL, 1, 6, 6, NULL"),
    "label with another project's rater": LABEL.format(values="1, 1, 2, NULL, 1, 6, 6, NULL"),
    "label with another project's category": LABEL.format(values="1, 1, 1, NULL, 2, 6, 6, NULL"),
    "label with another project's session": LABEL.format(values="1, 1, 1, 2, 1, 6, 6, NULL"),
    "label with another rater's session": LABEL.format(values="1, 1, 3, 1, 1, 6, 6, NULL"),
    "label with a missing item": LABEL.format(values="1, 99, 1, NULL, 1, 6, 6, NULL"),
    "label with a missing project": LABEL.format(values="9, 1, 1, NULL, 1, 6, 6, NULL"),
    "label without labeled_at": LABEL.format(values="1, 1, 1, NULL, 1, NULL, 6, NULL"),
    "label with a used client key": LABEL.format(values="1, 1, 3, NULL, 1, 6, 6, 'k'"),
    "label with an empty client key": LABEL.format(values="1, 1, 3, NULL, 1, 6, 6, ''"),
    "project with a used slug": (
        "INSERT INTO projects (slug, name, created_at) VALUES ('p1', 'x', 0)"
    ),
    "project with an unknown collapse policy": (
        "INSERT INTO projects (slug, name, created_at, collapse) VALUES ('p3', 'x', 0, 'median')"
    ),
    "project with an interval level of 1": (
        "INSERT INTO projects (slug, name, created_at, interval_level) VALUES ('p3', 'x', 0, 1.0)"
    ),
    "category with a used name": (
        "INSERT INTO categories (project_id, position, name) VALUES (1, 1, 'yes')"
    ),
    "category with a used position": (
        "INSERT INTO categories (project_id, position, name) VALUES (1, 0, 'no')"
    ),
    "category of a missing project": (
        "INSERT INTO categories (project_id, position, name) VALUES (9, 0, 'no')"
    ),
    "rater with a used external id": (
        "INSERT INTO raters (project_id, external_id, kind) VALUES (1, 'ann', 'model')"
    ),
    "rater of an unknown kind": (
        "INSERT INTO raters (project_id, external_id, kind) VALUES (1, 'cy', 'robot')"
    ),
    "rater with an empty external id": (
        "INSERT INTO raters (project_id, external_id, kind) VALUES (1, '', 'human')"
    ),
    "item with a used external id": "INSERT INTO items (project_id, external_id) VALUES (1, 'x')",
    "session of another project's rater": (
        "INSERT INTO sessions (project_id, rater_id, external_id, started_at, ended_at) "
        "VALUES (1, 2, 't', 0, 1)"
    ),
    "session ending before it starts": (
        "INSERT INTO sessions (project_id, rater_id, external_id, started_at, ended_at) "
        "VALUES (1, 1, 't', 5, 1)"
    ),
    "session with a used external id for its rater": (
        "INSERT INTO sessions (project_id, rater_id, external_id, started_at, ended_at) "
        "VALUES (1, 1, 's', 0, 1)"
    ),
    "removing a category that has labels": "DELETE FROM categories WHERE id = 1",
    "removing an item that has labels": "DELETE FROM items WHERE id = 1",
    "moving a label to another project": "UPDATE labels SET project_id = 2 WHERE id = 1",
    "moving a label to another rater's session": "UPDATE labels SET rater_id = 3 WHERE id = 1",
    "removing a rater that has labels": "DELETE FROM raters WHERE id = 1",
    "removing a session that has labels": "DELETE FROM sessions WHERE id = 1",
    "moving an item that has labels to another project": (
        "UPDATE items SET project_id = 2, external_id = 'y' WHERE id = 1"
    ),
    "renumbering a category that has labels": "UPDATE categories SET id = 50 WHERE id = 1",
    "renumbering a session that has labels": "UPDATE sessions SET id = 50 WHERE id = 1",
    # One bad row among good ones: the set-based check of PostgreSQL sees every row.
    "many labels, one with another project's item": (
        "INSERT INTO labels (project_id, item_id, rater_id, session_id, category_id, labeled_at, "
        "received_at) VALUES (1, 1, 1, 1, 1, 6, 6), (1, 1, 3, NULL, 1, 7, 7), "
        "(1, 2, 3, NULL, 1, 8, 8), (1, 1, 1, NULL, 1, 9, 9)"
    ),
}


def seed(engine: Engine) -> Engine:
    """The two projects of SETUP, with the sequences moved past the explicit ids."""
    with engine.begin() as connection:
        for statement in SETUP:
            connection.execute(text(statement))
        if connection.dialect.name == "postgresql":
            # Explicit ids do not move the sequences: move them, or a later insert would
            # collide on the primary key and be refused for the wrong reason.
            for table in ("projects", "categories", "raters", "items", "sessions", "labels"):
                connection.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 100)")
                )
    return engine


@pytest.fixture
def seeded(engine: Engine) -> Engine:
    return seed(engine)


def _run(connection: Connection, statement: str) -> int:
    """Run ``statement`` in its own transaction; the rows it changed."""
    with connection.begin():
        return connection.execute(text(statement)).rowcount


@pytest.mark.parametrize("case", sorted(VALID))
def test_valid_statement_is_accepted(seeded: Engine, case: str) -> None:
    statement, stored = VALID[case]
    with seeded.connect() as connection:
        assert _run(connection, statement) == 1
    with seeded.connect() as connection:  # committed: another connection sees the change
        assert connection.execute(text(stored)).scalar_one() == 1


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_statement_is_refused(seeded: Engine, case: str) -> None:
    with seeded.connect() as connection:
        with pytest.raises(IntegrityError):
            _run(connection, BROKEN[case])
        # The refusal rolled back; the connection stays usable and nothing changed.
        assert connection.execute(text("SELECT count(*) FROM labels")).scalar_one() == 1
