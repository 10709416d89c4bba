"""Alert channels keep their settings in one JSON column, ``config``, validated by the kind's
plugin (``auditor.notifiers.kinds``): a new channel kind needs a module, not a migration.

The per-kind columns (url, secret, email_host, email_port, email_from, email_to, starttls,
username, password) move into ``config`` under the same names, and back on downgrade. The
check constraints that listed the kinds and their columns go: the plugin checks the config.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

_json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")

# column -> the kind whose config holds it (the key in config is the column's name)
_COLUMNS: dict[str, tuple[str, sa.types.TypeEngine[Any]]] = {
    "url": ("webhook", sa.Text()),
    "secret": ("webhook", sa.String(length=200)),
    "email_host": ("email", sa.String(length=255)),
    "email_port": ("email", sa.Integer()),
    "email_from": ("email", sa.String(length=320)),
    "email_to": ("email", _json),
    "starttls": ("email", sa.Boolean()),
    "username": ("email", sa.String(length=200)),
    "password": ("email", sa.String(length=200)),
}
_OLD_CHECKS = {
    "kind": "kind IN ('webhook', 'email', 'log')",
    "webhook": "kind <> 'webhook' OR (url IS NOT NULL AND secret IS NOT NULL)",
    "email": "kind <> 'email' OR (email_host IS NOT NULL AND email_port IS NOT NULL "
    "AND email_from IS NOT NULL AND email_to IS NOT NULL)",
}


def _channels(*columns: str) -> sa.TableClause:
    types = {name: kind_type[1] for name, kind_type in _COLUMNS.items()}
    types.update(id=sa.Integer(), kind=sa.String(), config=_json)
    return sa.table("alert_channels", *(sa.column(name, types[name]) for name in columns))


def upgrade() -> None:
    with op.batch_alter_table("alert_channels") as batch:
        batch.add_column(sa.Column("config", _json, nullable=True))
    bind = op.get_bind()
    old = _channels("id", "kind", *_COLUMNS)
    new = _channels("id", "config")
    for row in bind.execute(sa.select(old)).mappings().all():
        config = {
            name: row[name]
            for name, (kind, _type) in _COLUMNS.items()
            if kind == row["kind"] and (row[name] is not None or name in ("username", "password"))
        }
        if row["kind"] == "email":
            config["starttls"] = bool(row["starttls"])
        bind.execute(sa.update(new).where(new.c.id == row["id"]).values(config=config))
    with op.batch_alter_table("alert_channels") as batch:
        for name in _OLD_CHECKS:
            batch.drop_constraint(op.f(f"ck_alert_channels_{name}"), type_="check")
        for name in _COLUMNS:
            batch.drop_column(name)
        batch.alter_column("config", existing_type=_json, nullable=False)
        batch.alter_column("kind", existing_type=sa.String(length=8), type_=sa.String(length=32))


def downgrade() -> None:
    bind = op.get_bind()
    # Kinds the old schema does not know cannot go back: their channels (and their rules'
    # links to them) are dropped, as 0009's downgrade drops rules on the new conditions.
    unknown = "kind NOT IN ('webhook', 'email', 'log')"
    op.execute(
        "DELETE FROM alert_rule_channels WHERE channel_id IN "
        f"(SELECT id FROM alert_channels WHERE {unknown})"
    )
    op.execute(f"DELETE FROM alert_channels WHERE {unknown}")
    with op.batch_alter_table("alert_channels") as batch:
        for name, (_kind, type_) in _COLUMNS.items():
            if name == "starttls":
                batch.add_column(sa.Column(name, type_, server_default=sa.false(), nullable=False))
            else:
                batch.add_column(sa.Column(name, type_, nullable=True))
    table = _channels("id", "kind", "config", *_COLUMNS)
    for row in bind.execute(sa.select(table.c.id, table.c.kind, table.c.config)).mappings().all():
        config = row["config"] or {}
        values = {
            name: config.get(name) for name, (kind, _t) in _COLUMNS.items() if kind == row["kind"]
        }
        if row["kind"] == "email":
            values["starttls"] = bool(config.get("starttls", False))
        if values:
            bind.execute(sa.update(table).where(table.c.id == row["id"]).values(**values))
    with op.batch_alter_table("alert_channels") as batch:
        batch.alter_column("kind", existing_type=sa.String(length=32), type_=sa.String(length=8))
        batch.drop_column("config")
        for name, check in _OLD_CHECKS.items():
            batch.create_check_constraint(op.f(f"ck_alert_channels_{name}"), check)
