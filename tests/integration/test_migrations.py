"""The migration chain runs both ways on both backends, and matches the models."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from auditor.storage import migrate
from auditor.storage.db import make_engine

TABLES = {"projects", "categories", "raters", "items", "sessions", "labels"}


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return set(inspect(connection).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_base_head_base_head(scratch_database_url: str) -> None:
    url = scratch_database_url
    assert migrate.current(url) is None
    migrate.upgrade(url)
    assert migrate.current(url) == migrate.head()
    assert _tables(url) >= TABLES
    migrate.check(url)

    migrate.downgrade(url, "base")
    assert migrate.current(url) is None
    assert _tables(url) == set()

    migrate.upgrade(url)
    assert migrate.current(url) == migrate.head()
    migrate.check(url)


def test_check_detects_drift(scratch_database_url: str) -> None:
    """The drift check can fail: an index missing from the database is drift."""
    migrate.upgrade(scratch_database_url)
    engine = make_engine(scratch_database_url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("DROP INDEX ix_labels_project_id_labeled_at")
    finally:
        engine.dispose()
    with pytest.raises(migrate.SchemaDriftError):
        migrate.check(scratch_database_url)


def test_existing_projects_get_the_moments_rater_model(scratch_database_url: str) -> None:
    url = scratch_database_url
    migrate.upgrade(url, "0004")
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO projects (slug, name, created_at) VALUES ('old', 'Old', 0)"
            )
        migrate.upgrade(url)
        with engine.connect() as connection:
            stored = connection.exec_driver_sql("SELECT rater_model FROM projects").scalar_one()
        assert stored == "moments"
        with engine.begin() as connection, pytest.raises(Exception, match="rater_model"):
            connection.exec_driver_sql("UPDATE projects SET rater_model = 'guess'")
    finally:
        engine.dispose()
