"""The label reference triggers (migration 0001) under load and under concurrency.

A label's item, rater, category and session are checked by triggers rather than foreign keys
(one set-based check per statement on PostgreSQL). These tests cover what the one-statement
cases of ``test_constraints.py`` cannot: TRUNCATE, and a delete racing an insert.
"""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from tests.integration.test_constraints import seed


@pytest.fixture
def seeded(engine: Engine) -> Engine:
    return seed(engine)


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_truncating_a_parent_alone_is_refused(seeded: Engine) -> None:
    with seeded.connect() as connection:
        with pytest.raises(IntegrityError, match="labels reference"), connection.begin():
            connection.execute(text("TRUNCATE items CASCADE"))
        count = connection.execute(text("SELECT count(*) FROM items")).scalar_one()
        assert count == 2
        connection.rollback()
        with connection.begin():  # with the labels, as with foreign keys, it is allowed
            connection.execute(text("TRUNCATE items, labels"))


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_delete_racing_an_insert_waits_and_is_refused(seeded: Engine) -> None:
    """The insert locks the item it references (FOR KEY SHARE); the delete waits for it, then
    sees the committed label and is refused: no label is left pointing at nothing."""
    outcome: list[BaseException | None] = []
    with seeded.connect() as inserter:
        inserter.begin()
        inserter.execute(
            text(
                "INSERT INTO labels (project_id, item_id, rater_id, category_id, labeled_at, "
                "received_at) VALUES (2, 2, 2, 2, 1, 1)"
            )
        )

        def delete() -> None:
            try:
                with seeded.begin() as deleter:
                    deleter.execute(text("DELETE FROM items WHERE id = 2"))
                outcome.append(None)
            except BaseException as error:  # handed to the test thread
                outcome.append(error)

        worker = threading.Thread(target=delete)
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive(), "the delete did not wait for the inserting transaction"
        inserter.commit()
        worker.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], IntegrityError), outcome
    with seeded.connect() as connection:
        orphans = connection.execute(
            text(
                "SELECT count(*) FROM labels l WHERE NOT EXISTS "
                "(SELECT 1 FROM items i WHERE i.project_id = l.project_id AND i.id = l.item_id)"
            )
        ).scalar_one()
    assert orphans == 0


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_an_insert_racing_a_delete_is_refused(seeded: Engine) -> None:
    """The other order: the item's delete is not committed when the insert checks; the insert
    waits on the item's row lock, then finds it gone and is refused."""
    outcome: list[BaseException | None] = []
    with seeded.connect() as deleter:
        deleter.begin()
        deleter.execute(text("DELETE FROM items WHERE id = 2"))

        def insert() -> None:
            try:
                with seeded.begin() as inserter:
                    inserter.execute(
                        text(
                            "INSERT INTO labels (project_id, item_id, rater_id, category_id, "
                            "labeled_at, received_at) VALUES (2, 2, 2, 2, 1, 1)"
                        )
                    )
                outcome.append(None)
            except BaseException as error:  # handed to the test thread
                outcome.append(error)

        worker = threading.Thread(target=insert)
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive(), "the insert did not wait for the deleting transaction"
        deleter.commit()
        worker.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], IntegrityError), outcome


def test_a_bulk_insert_with_one_bad_row_writes_nothing(seeded: Engine) -> None:
    rows = ", ".join(f"(1, 1, 1, NULL, 1, {n}, {n})" for n in range(10, 2010))
    bad = "(1, 1, 2, NULL, 1, 5000, 5000)"  # rater 2 is project 2's
    with seeded.connect() as connection:
        with pytest.raises(IntegrityError), connection.begin():
            connection.execute(
                text(
                    "INSERT INTO labels (project_id, item_id, rater_id, session_id, "
                    f"category_id, labeled_at, received_at) VALUES {rows}, {bad}"
                )
            )
        assert connection.execute(text("SELECT count(*) FROM labels")).scalar_one() == 1
