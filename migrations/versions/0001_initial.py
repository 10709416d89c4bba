"""Initial schema: projects, categories, raters, items, sessions, labels.

Timestamps are BIGINT microseconds since the epoch (``auditor.storage.db.UtcMicros``).

A label's references (its item, rater, category and session, all of its own project) are
checked by triggers, not by foreign keys: a composite foreign key is checked row by row (a
lookup and a parent row lock per label and per key: 3-4 per label), which made PostgreSQL
spend about 80% of a bulk import on them. The triggers keep the same rules:

- PostgreSQL: one statement-level trigger per INSERT or UPDATE on labels checks all new rows
  at once (a hash join of the transition table against each parent table) and locks each
  distinct parent row FOR KEY SHARE, as a foreign key would, so a concurrent delete waits;
  row triggers on the parents refuse deleting or re-keying a row that labels point at (they
  run after the row is locked, so they see labels committed meanwhile), and TRUNCATE of a
  parent is refused while labels exist (checked after the statement, so truncating the
  labels along with it is allowed, as with foreign keys).
- SQLite (one writer at a time): row triggers on labels and on the parents, same rules.

Trade-off: the rules are triggers, so they are not listed as foreign keys in the catalogue
(tools that draw diagrams from it miss these edges), and ``ALTER TABLE ... DISABLE TRIGGER``
or ``session_replication_role = replica`` bypass them as they would bypass foreign keys.
Violations raise SQLSTATE 23503 (foreign_key_violation) on PostgreSQL and a constraint error
on SQLite, like the foreign keys did.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column(
            "collapse", sa.String(length=16), server_default=sa.text("'first'"), nullable=False
        ),
        sa.Column(
            "rho_mode",
            sa.String(length=16),
            server_default=sa.text("'approximate'"),
            nullable=False,
        ),
        sa.Column(
            "rho_unrated", sa.String(length=16), server_default=sa.text("'pool'"), nullable=False
        ),
        sa.Column(
            "interval_method",
            sa.String(length=16),
            server_default=sa.text("'jackknife'"),
            nullable=False,
        ),
        sa.Column("interval_level", sa.Float(), server_default=sa.text("0.95"), nullable=False),
        sa.Column(
            "bootstrap_resamples", sa.Integer(), server_default=sa.text("1000"), nullable=False
        ),
        sa.Column(
            "windows_days", sa.String(length=200), server_default=sa.text("'7'"), nullable=False
        ),
        sa.Column(
            "recompute_interval_seconds", sa.Integer(), server_default=sa.text("60"), nullable=False
        ),
        sa.CheckConstraint(
            "collapse IN ('first', 'latest', 'mode')", name=op.f("ck_projects_collapse")
        ),
        sa.CheckConstraint(
            "interval_method IN ('none', 'jackknife', 'bootstrap')",
            name=op.f("ck_projects_interval_method"),
        ),
        sa.CheckConstraint(
            "rho_mode IN ('approximate', 'exact')", name=op.f("ck_projects_rho_mode")
        ),
        sa.CheckConstraint(
            "rho_unrated IN ('pool', 'exclude', 'perfect')", name=op.f("ck_projects_rho_unrated")
        ),
        sa.CheckConstraint("slug <> ''", name=op.f("ck_projects_slug_not_empty")),
        sa.CheckConstraint(
            "bootstrap_resamples >= 10", name=op.f("ck_projects_bootstrap_resamples")
        ),
        sa.CheckConstraint(
            "interval_level >= 0.5 AND interval_level < 1", name=op.f("ck_projects_interval_level")
        ),
        sa.CheckConstraint(
            "recompute_interval_seconds > 0", name=op.f("ck_projects_recompute_interval")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("slug", name=op.f("uq_projects_slug")),
    )
    op.create_table(
        "categories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.CheckConstraint("name <> ''", name=op.f("ck_categories_name_not_empty")),
        sa.CheckConstraint("position >= 0", name=op.f("ck_categories_position_not_negative")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_categories_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_categories")),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_categories_project_id_id")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_categories_project_id_name")),
        sa.UniqueConstraint(
            "project_id", "position", name=op.f("uq_categories_project_id_position")
        ),
    )
    op.create_table(
        "items",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column(
            "metadata", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=True
        ),
        sa.CheckConstraint("external_id <> ''", name=op.f("ck_items_external_id_not_empty")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_items_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
        sa.UniqueConstraint(
            "project_id", "external_id", name=op.f("uq_items_project_id_external_id")
        ),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_items_project_id_id")),
    )
    op.create_table(
        "raters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=8), server_default=sa.text("'human'"), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=True),
        sa.CheckConstraint("external_id <> ''", name=op.f("ck_raters_external_id_not_empty")),
        sa.CheckConstraint("kind IN ('human', 'model')", name=op.f("ck_raters_kind")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_raters_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_raters")),
        sa.UniqueConstraint(
            "project_id", "external_id", name=op.f("uq_raters_project_id_external_id")
        ),
        sa.UniqueConstraint("project_id", "id", name=op.f("uq_raters_project_id_id")),
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("external_id <> ''", name=op.f("ck_sessions_external_id_not_empty")),
        sa.CheckConstraint("ended_at >= started_at", name=op.f("ck_sessions_ended_after_started")),
        sa.ForeignKeyConstraint(
            ["project_id", "rater_id"],
            ["raters.project_id", "raters.id"],
            name=op.f("fk_sessions_project_id_rater_id_raters"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_sessions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
        sa.UniqueConstraint(
            "project_id",
            "rater_id",
            "external_id",
            name=op.f("uq_sessions_project_id_rater_id_external_id"),
        ),
        sa.UniqueConstraint(
            "project_id", "rater_id", "id", name=op.f("uq_sessions_project_id_rater_id_id")
        ),
    )
    op.create_table(
        "labels",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column(
            "session_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("labeled_at", sa.BigInteger(), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("client_key", sa.String(length=200), nullable=True),
        sa.CheckConstraint("client_key <> ''", name=op.f("ck_labels_client_key_not_empty")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_labels")),
        sa.UniqueConstraint(
            "project_id", "client_key", name=op.f("uq_labels_project_id_client_key")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("labels", schema=None) as batch_op:
        batch_op.create_index("ix_labels_project_id_id", ["project_id", "id"], unique=False)
        batch_op.create_index(
            "ix_labels_project_id_labeled_at", ["project_id", "labeled_at"], unique=False
        )
    _create_reference_triggers(op.get_bind().dialect.name)


def downgrade() -> None:
    _drop_reference_triggers(op.get_bind().dialect.name)
    with op.batch_alter_table("labels", schema=None) as batch_op:
        batch_op.drop_index("ix_labels_project_id_labeled_at")
        batch_op.drop_index("ix_labels_project_id_id")

    op.drop_table("labels")
    op.drop_table("sessions")
    op.drop_table("raters")
    op.drop_table("items")
    op.drop_table("categories")
    op.drop_table("projects")


# (parent table, label columns, parent columns, label rows to check): the references of a label.
_REFERENCES = (
    ("items", ("project_id", "item_id"), ("project_id", "id"), "TRUE"),
    ("raters", ("project_id", "rater_id"), ("project_id", "id"), "TRUE"),
    ("categories", ("project_id", "category_id"), ("project_id", "id"), "TRUE"),
    (
        "sessions",
        ("project_id", "rater_id", "session_id"),
        ("project_id", "rater_id", "id"),
        "session_id IS NOT NULL",
    ),
)
_MESSAGE = "a label must reference an item, rater, category and session of its own project"


def _matches(left: str, left_columns: tuple[str, ...], right: str, right_columns: tuple) -> str:
    pairs = zip(left_columns, right_columns, strict=True)
    return " AND ".join(f"{left}.{a} = {right}.{b}" for a, b in pairs)


def _postgres_label_check() -> str:
    """One set-based check per statement: distinct references of the new rows, each parent
    row locked FOR KEY SHARE (as a foreign key check does), counts compared."""
    checks = []
    for parent, label_columns, parent_columns, condition in _REFERENCES:
        columns = ", ".join(label_columns)
        join = _matches("p", parent_columns, "w", label_columns)
        checks.append(
            f"""
  SELECT count(*) INTO wanted FROM (
    SELECT DISTINCT {columns} FROM new_labels WHERE {condition}) w;
  SELECT count(*) INTO found FROM (
    SELECT 1 FROM {parent} p
    JOIN (SELECT DISTINCT {columns} FROM new_labels WHERE {condition}) w ON {join}
    FOR KEY SHARE OF p) s;
  IF found < wanted THEN
    SELECT format('(%s)=(%s)', '{columns}', concat_ws(', ', {columns})) INTO bad
    FROM new_labels w WHERE {condition}
    AND NOT EXISTS (SELECT 1 FROM {parent} p WHERE {join}) LIMIT 1;
    RAISE EXCEPTION 'label references no row of {parent}: %', bad
      USING ERRCODE = 'foreign_key_violation', DETAIL = '{_MESSAGE}';
  END IF;"""
        )
    return f"""
CREATE FUNCTION labels_check_references() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  wanted bigint;
  found bigint;
  bad text;
BEGIN{"".join(checks)}
  RETURN NULL;
END $$"""


def _postgres_parent_guard(parent: str, label_columns: tuple, parent_columns: tuple) -> list[str]:
    key_changed = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in parent_columns)
    match = _matches("l", label_columns, "OLD", parent_columns)
    function = f"{parent}_guard_labels"
    return [
        f"""
CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    IF EXISTS (SELECT 1 FROM labels) THEN
      RAISE EXCEPTION 'cannot truncate {parent}: labels reference it'
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
  END IF;
  IF EXISTS (SELECT 1 FROM labels l WHERE {match}) THEN
    RAISE EXCEPTION '{parent} row % is referenced by labels', OLD.id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$""",
        f"CREATE TRIGGER {parent}_guard_delete AFTER DELETE ON {parent} "
        f"FOR EACH ROW EXECUTE FUNCTION {function}()",
        f"CREATE TRIGGER {parent}_guard_update AFTER UPDATE ON {parent} "
        f"FOR EACH ROW WHEN ({key_changed}) EXECUTE FUNCTION {function}()",
        f"CREATE TRIGGER {parent}_guard_truncate AFTER TRUNCATE ON {parent} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
    ]


def _sqlite_statements() -> list[str]:
    missing = " OR ".join(
        f"(NEW.{label_columns[-1]} IS NOT NULL AND NOT EXISTS "
        f"(SELECT 1 FROM {parent} p WHERE {_matches('p', parent_columns, 'NEW', label_columns)}))"
        for parent, label_columns, parent_columns, _ in _REFERENCES
    )
    fail = f"BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: {_MESSAGE}'); END"
    label_columns = "project_id, item_id, rater_id, session_id, category_id"
    statements = [
        f"CREATE TRIGGER labels_check_insert BEFORE INSERT ON labels WHEN {missing} {fail}",
        f"CREATE TRIGGER labels_check_update BEFORE UPDATE OF {label_columns} ON labels "
        f"WHEN {missing} {fail}",
    ]
    for parent, label_columns_, parent_columns, _ in _REFERENCES:
        match = _matches("l", label_columns_, "OLD", parent_columns)
        used = f"EXISTS (SELECT 1 FROM labels l WHERE {match})"
        changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in parent_columns)
        message = f"FOREIGN KEY constraint failed: labels reference {parent}"
        guard = f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
        statements.append(
            f"CREATE TRIGGER {parent}_guard_delete BEFORE DELETE ON {parent} WHEN {used} {guard}"
        )
        statements.append(
            f"CREATE TRIGGER {parent}_guard_update BEFORE UPDATE OF {', '.join(parent_columns)} "
            f"ON {parent} WHEN ({changed}) AND {used} {guard}"
        )
    return statements


def _create_reference_triggers(dialect: str) -> None:
    if dialect == "sqlite":
        for statement in _sqlite_statements():
            op.execute(statement)
        return
    op.execute(_postgres_label_check())
    for event in ("INSERT", "UPDATE"):
        op.execute(
            f"CREATE TRIGGER labels_check_{event.lower()} AFTER {event} ON labels "
            "REFERENCING NEW TABLE AS new_labels "
            "FOR EACH STATEMENT EXECUTE FUNCTION labels_check_references()"
        )
    for parent, label_columns, parent_columns, _ in _REFERENCES:
        for statement in _postgres_parent_guard(parent, label_columns, parent_columns):
            op.execute(statement)


def _drop_reference_triggers(dialect: str) -> None:
    # Dropping a table drops its triggers; the PostgreSQL functions stay unless dropped.
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS labels_check_insert ON labels")
        op.execute("DROP TRIGGER IF EXISTS labels_check_update ON labels")
        op.execute("DROP FUNCTION IF EXISTS labels_check_references()")
        for parent, *_ in _REFERENCES:
            for event in ("delete", "update", "truncate"):
                op.execute(f"DROP TRIGGER IF EXISTS {parent}_guard_{event} ON {parent}")
            op.execute(f"DROP FUNCTION IF EXISTS {parent}_guard_labels()")
