"""``auditor keys create|list|revoke``: per-project API keys (the secret is shown once)."""

from __future__ import annotations

from typing import Annotated

import typer

from auditor.cli._common import unit_of_work
from auditor.services.access.keys import Role, create_key, list_keys, revoke_key
from auditor.services.alerts.rules import install_label_studio_rule

keys_app = typer.Typer(help="API keys of a project.", no_args_is_help=True)


@keys_app.command("create")
def create(
    project: Annotated[str, typer.Argument(help="project slug")],
    role: Annotated[
        Role, typer.Option(help="ingest, read, admin, or label-studio (its webhook only)")
    ] = Role.READ,
    name: Annotated[str | None, typer.Option(help="a note to recognise the key by")] = None,
) -> None:
    """Create a key; its secret is the last word printed (store it now, it is not kept)."""
    view, secret = create_key(unit_of_work(), project, role.value, name)
    if role is Role.LABEL_STUDIO:
        # the webhook is about to be on: a refused call must not go unnoticed
        rule = install_label_studio_rule(unit_of_work(), project)
        if rule is not None:
            typer.echo(f"added alert rule {rule.id} (refused webhook calls)", err=True)
    typer.echo(f"created {view.role} key {view.id} for project {view.project}: {secret}")


@keys_app.command("list")
def list_(project: Annotated[str, typer.Argument(help="project slug")]) -> None:
    """Keys of a project (prefix only; secrets are never stored)."""
    views = list_keys(unit_of_work(), project)
    typer.echo(f"{'id':>5}  {'role':<12} {'prefix':<13} {'created':<20} {'last used':<20} state")
    for v in views:
        used = v.last_used_at.strftime("%Y-%m-%d %H:%M:%S") if v.last_used_at else "-"
        state = "revoked" if v.revoked_at else "active"
        created = v.created_at.strftime("%Y-%m-%d %H:%M:%S")
        typer.echo(f"{v.id:>5}  {v.role:<12} {v.prefix:<13} {created:<20} {used:<20} {state}")


@keys_app.command("revoke")
def revoke(
    project: Annotated[str, typer.Argument(help="project slug")],
    key_id: Annotated[int, typer.Argument(help="key id (from `auditor keys list`)")],
) -> None:
    """Revoke a key: requests with it answer 401 from now on."""
    done = revoke_key(unit_of_work(), project, key_id)
    typer.echo(f"key {key_id} revoked" if done else f"key {key_id} was already revoked")


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
