"""The migration chain runs both ways on both backends, and matches the models."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import inspect, text

from auditor.notifiers.kinds import load_config
from auditor.notifiers.kinds.email import EmailConfig
from auditor.notifiers.kinds.log import LogConfig
from auditor.notifiers.kinds.webhook import WebhookConfig
from auditor.storage import history_rollups, migrate
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


_OLD_CHANNELS = """
INSERT INTO alert_channels (project_id, name, kind, url, secret, email_host, email_port,
    email_from, email_to, starttls, username, password, timeout_seconds, created_at)
VALUES
    (:p, 'hook', 'webhook', 'https://h.example/x', :secret, NULL, NULL, NULL, NULL, false,
     NULL, NULL, 5, 0),
    (:p, 'mail', 'email', NULL, NULL, 'smtp.example', 587, 'a@example.org',
     '["ops@example.org", "b@example.org"]', true, 'user', 'pw', 7, 0),
    (:p, 'log', 'log', NULL, NULL, NULL, NULL, NULL, NULL, false, NULL, NULL, 10, 0)
"""
# A rule sending to each channel: the SQLite table rebuild must keep rows that point at it.
_OLD_LINKS = """
INSERT INTO alert_rules (id, project_id, metric, subject_kind, subject_ref, scope,
    condition_kind, threshold, min_n, for_seconds, keep_firing_for_seconds, severity, enabled,
    created_at)
VALUES ('r1', :p, 'kappa_s', 'project', '', 'cumulative', 'below', 0.6, 1, 0, 0, 'warning',
    true, 0);
INSERT INTO alert_rule_channels (rule_id, channel_id) SELECT 'r1', id FROM alert_channels
"""
_OLD_COLUMNS = (
    "name, kind, url, secret, email_host, email_port, email_from, email_to, starttls, "
    "username, password, timeout_seconds"
)


def _old_channels(connection) -> list[tuple]:
    rows = connection.execute(text(f"SELECT {_OLD_COLUMNS} FROM alert_channels ORDER BY name"))
    decoded = []
    for row in rows:
        row = list(row)
        row[7] = json.loads(row[7]) if isinstance(row[7], str) else row[7]  # JSON text on SQLite
        row[8] = bool(row[8])
        decoded.append(tuple(row))
    return decoded


def _links(connection) -> list[tuple]:
    query = (
        "SELECT rule_id, name FROM alert_rule_channels JOIN alert_channels"
        " ON alert_channels.id = channel_id ORDER BY name"
    )
    return [tuple(row) for row in connection.execute(text(query))]


def test_channel_settings_move_into_config_and_back(scratch_database_url: str) -> None:
    """0011: the per-kind columns become the kind's JSON config, the plugin reads it, and a
    downgrade puts every value back where it was."""
    url = scratch_database_url
    migrate.upgrade(url, "0010")
    engine = make_engine(url)
    secret = "s" * 40
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO projects (slug, name, created_at) VALUES ('p', 'P', 0)"
            )
            project = connection.exec_driver_sql("SELECT id FROM projects").scalar_one()
            connection.execute(text(_OLD_CHANNELS), {"p": project, "secret": secret})
            for statement in _OLD_LINKS.split(";"):
                connection.execute(text(statement), {"p": project})
        with engine.connect() as connection:
            before = _old_channels(connection)
            links = _links(connection)
        assert len(links) == 3

        migrate.upgrade(url)
        migrate.check(url)
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT name, kind, config FROM alert_channels ORDER BY name")
            ).all()
        configs = {
            name: load_config(kind, json.loads(c) if isinstance(c, str) else c)
            for name, kind, c in rows
        }
        assert configs["hook"] == WebhookConfig("https://h.example/x", secret)
        assert configs["mail"] == EmailConfig(
            "smtp.example", 587, "a@example.org", ("ops@example.org", "b@example.org"),
            True, "user", "pw",
        )  # fmt: skip
        assert configs["log"] == LogConfig()

        with engine.connect() as connection:
            assert _links(connection) == links

        migrate.downgrade(url, "0010")
        with engine.connect() as connection:
            assert _old_channels(connection) == before
            assert _links(connection) == links
    finally:
        engine.dispose()


_LABEL = (
    "INSERT INTO labels (project_id, item_id, rater_id, category_id, labeled_at, received_at, "
    "client_key) VALUES (:p, :i, :r, :c, 0, 0, :key)"
)


def _client_key_rule_holds(connection, parents: dict[str, int]) -> None:
    """A key is unique in its project, labels without one are not limited, and the
    reference check still refuses a label pointing nowhere."""
    for _ in range(2):
        connection.execute(text(_LABEL), {**parents, "key": None})
    nested = connection.begin_nested()
    with pytest.raises(Exception, match="client_key"):
        connection.execute(text(_LABEL), {**parents, "key": "k1"})
    nested.rollback()
    nested = connection.begin_nested()
    with pytest.raises(Exception, match=r"(?i)foreign ?key"):
        connection.execute(text(_LABEL), {**parents, "i": parents["i"] + 100, "key": None})
    nested.rollback()


def test_client_key_rule_survives_the_partial_index(scratch_database_url: str) -> None:
    """0013: the unique (project, client key) constraint becomes a partial index, both ways,
    with the labels, the rule, the reference triggers and (SQLite) the id counter kept."""
    url = scratch_database_url
    migrate.upgrade(url, "0012")
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO projects (slug, name, created_at) VALUES ('p', 'P', 0)"
            )
            p = connection.exec_driver_sql("SELECT id FROM projects").scalar_one()
            for table, values in (
                ("items", "(project_id, external_id) VALUES (:p, 'i')"),
                ("raters", "(project_id, external_id, kind) VALUES (:p, 'r', 'human')"),
                ("categories", "(project_id, name, position) VALUES (:p, 'a', 0)"),
            ):
                connection.execute(text(f"INSERT INTO {table} {values}"), {"p": p})
            parents = {"p": p}
            for name, table in (("i", "items"), ("r", "raters"), ("c", "categories")):
                parents[name] = connection.execute(text(f"SELECT id FROM {table}")).scalar_one()
            for key in ("k1", "k2", None):
                connection.execute(text(_LABEL), {**parents, "key": key})
            # The highest id goes: an id counter rebuilt from max(id) would hand it out again.
            top = connection.exec_driver_sql("SELECT max(id) FROM labels").scalar_one()
            connection.exec_driver_sql(f"DELETE FROM labels WHERE id = {top}")

        for target in ("head", "0012"):
            if target == "head":
                migrate.upgrade(url)
                migrate.check(url)
            else:
                migrate.downgrade(url, target)
            with engine.begin() as connection:
                keys = connection.exec_driver_sql(
                    "SELECT client_key FROM labels ORDER BY id"
                ).scalars()
                assert list(keys)[:2] == ["k1", "k2"]
                new = connection.execute(text(_LABEL + " RETURNING id"), {**parents, "key": None})
                assert new.scalar_one() > top
                _client_key_rule_holds(connection, parents)
                top = connection.exec_driver_sql("SELECT max(id) FROM labels").scalar_one()
                connection.exec_driver_sql(f"DELETE FROM labels WHERE id = {top}")
    finally:
        engine.dispose()


def test_history_rollups_are_backfilled_from_existing_points(scratch_database_url: str) -> None:
    """0023 builds the rollups of points written before it; they equal what the code writes
    snapshot by snapshot (``history_rollups.add_snapshot``) and what ``rebuild`` makes; pairs
    are left out."""
    url = scratch_database_url
    migrate.upgrade(url, "0021")
    engine = make_engine(url)
    hour = 3_600_000_000
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO projects (slug, name, created_at) VALUES ('old', 'Old', 0)"
            )
            project = connection.exec_driver_sql("SELECT id FROM projects").scalar_one()
            for i in range(400):
                at = 1_767_225_600_000_000 + i * 5 * hour + (i % 7) * 60_000_000
                snapshot = connection.execute(
                    text(_OLD_SNAPSHOT), {"p": project, "tick": i, "at": at}
                ).scalar_one()
                for kind, subject, value in (
                    ("project", "", None if i % 13 == 0 else 0.5 + (i % 11) / 50),
                    ("rater", "r1", 0.3 + (i % 5) / 10),
                    ("pair", "r1|r2", 0.4),
                ):
                    connection.execute(
                        text(_OLD_POINT),
                        {
                            "s": snapshot, "p": project, "at": at, "kind": kind,
                            "subject": subject, "value": value,
                            "low": None if value is None else value - 0.05,
                            "high": None if value is None else value + 0.05,
                            "n": 5 + i % 4, "reason": None if value is not None else f"r{i % 2}",
                        },
                    )  # fmt: skip
        migrate.upgrade(url)
        with engine.begin() as connection:
            backfilled = connection.execute(text(_ROLLUPS)).all()
            counted = connection.exec_driver_sql("SELECT scope, snapshots FROM snapshot_counts")
            assert [tuple(row) for row in counted] == [("cumulative", 400)]
            connection.exec_driver_sql("DELETE FROM metric_rollups")
            snapshots = connection.exec_driver_sql(
                "SELECT id, as_of, computed_at FROM snapshots ORDER BY tick"
            ).all()
            for snapshot_id, as_of, computed_at in snapshots:
                history_rollups.add_snapshot(connection, snapshot_id, as_of, computed_at)
            written = connection.execute(text(_ROLLUPS)).all()
            history_rollups.rebuild(connection, project)
            rebuilt = connection.execute(text(_ROLLUPS)).all()
    finally:
        engine.dispose()
    assert len(backfilled) > 400  # 5 levels, 2 series
    assert {row[1] for row in backfilled} == {"project", "rater"}
    assert backfilled == written
    assert rebuilt == written


_OLD_SNAPSHOT = """
INSERT INTO snapshots (project_id, scope, tick, computed_at, as_of, watermark,
    project_label_count, n_labels, n_items, n_raters, n_pairable_items, categories, settings,
    code_version, interval_method, duration_ms, result)
VALUES (:p, 'cumulative', :tick, :at, :at, 0, 0, 0, 0, 2, 0, '[]', '{}', 'old', 'jackknife',
    1.0, '{}')
RETURNING id
"""
_OLD_POINT = """
INSERT INTO metric_points (snapshot_id, project_id, scope, computed_at, as_of, metric,
    subject_kind, subject_id, value, ci_low, ci_high, n, reason)
VALUES (:s, :p, 'cumulative', :at, :at, 'kappa_s', :kind, :subject, :value, :low, :high, :n,
    :reason)
"""
_ROLLUPS = """
SELECT metric, subject_kind, subject_id, scope, span, span_start, points, low, high, low_at,
    high_at, ci_low, ci_high, n, undefined, undefined_at, reason, computed_at, snapshot_id
FROM metric_rollups ORDER BY subject_kind, subject_id, span, span_start
"""
