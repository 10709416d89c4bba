"""``auditor alerts channel add | list | remove`` (wired by ``auditor.cli.alerts``).

The options are the settings of the kinds we ship (``auditor.notifiers.kinds``); each option
given goes to the kind, which refuses the ones it does not take.
"""

from __future__ import annotations

from typing import Any

import typer

from auditor.cli._common import fail, unit_of_work
from auditor.errors import AuditorError
from auditor.notifiers.kinds import KINDS
from auditor.services.alerts.channels import ChannelSpec, add_channel, list_channels, remove_channel


def channel_add(
    project: str = typer.Argument(..., help="Project slug."),
    name: str = typer.Argument(..., help="Channel name."),
    kind: str = typer.Option(..., "--kind", help=f"{', '.join(KINDS)}."),
    url: str | None = typer.Option(None, "--url", help="Webhook URL."),
    secret: str | None = typer.Option(None, "--secret", help="Default: generated."),
    host: str | None = typer.Option(None, "--smtp-host"),
    port: int | None = typer.Option(None, "--smtp-port", help="Default: 25."),
    sender: str | None = typer.Option(None, "--from"),
    to: list[str] = typer.Option([], "--to", help="Recipient; repeat."),
    starttls: bool = typer.Option(False, "--starttls"),
    username: str | None = typer.Option(None, "--username"),
    password: str | None = typer.Option(None, "--password"),
    timeout: float = typer.Option(10.0, "--timeout"),
) -> None:
    """Add a channel. A webhook's signing secret is printed once."""
    config: dict[str, Any] = {
        "url": url,
        "secret": secret,
        "email_host": host,
        "email_port": port,
        "email_from": sender,
        "email_to": list(to) or None,
        "starttls": starttls or None,
        "username": username,
        "password": password,
    }
    spec = ChannelSpec(name=name, kind=kind, config=config, timeout_seconds=timeout)
    try:
        view, made_secret = add_channel(unit_of_work(), project, spec)
    except AuditorError as error:
        fail(str(error))
    typer.echo(f"added {view.kind} channel {view.name}")
    if made_secret:
        typer.echo(f"signing secret (shown once): {made_secret}")


def channel_list(project: str = typer.Argument(..., help="Project slug.")) -> None:
    """The project's channels (secrets are never shown)."""
    try:
        views = list_channels(unit_of_work(read_only=True), project)
    except AuditorError as error:
        fail(str(error))
    for v in views:
        s = v.settings
        if "url" in s:
            target = s["url"]
        elif "email_host" in s:
            target = f"{s['email_host']}:{s['email_port']} to {','.join(s['email_to'])}"
        else:  # another kind: its settings as they are
            target = " ".join(f"{key}={value}" for key, value in s.items())
        typer.echo(f"{v.name:<16} {v.kind:<8} {target}")


def channel_remove(project: str, name: str) -> None:
    """Remove a channel no rule uses."""
    try:
        remove_channel(unit_of_work(), project, name)
    except AuditorError as error:
        fail(str(error))
    typer.echo(f"removed channel {name}")
