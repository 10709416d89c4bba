"""``auditor alerts channel add | list | update | remove`` (wired by ``auditor.cli.alerts``).

A kind's settings are given as ``--set key=value`` (repeat; the kind reads the text as its
setting's type: integers, true/false, comma-separated lists). The options of the first kinds
(``--url``, ``--smtp-host``, ...) are shorthands for their ``--set``. The kind's plugin
checks them; its error names the setting, and we name the option the user typed.
"""

from __future__ import annotations

from typing import Any, NoReturn

import typer

from auditor.cli._common import fail, unit_of_work
from auditor.errors import AuditorError
from auditor.notifiers.kinds import KINDS, kind_named
from auditor.services.alerts.channels import (
    ChannelChange,
    ChannelSpec,
    add_channel,
    list_channels,
    remove_channel,
    update_channel,
)

# Shorthand option -> the setting it stands for.
SHORTHANDS = {
    "--url": "url",
    "--secret": "secret",
    "--smtp-host": "email_host",
    "--smtp-port": "email_port",
    "--from": "email_from",
    "--to": "email_to",
    "--starttls": "starttls",
    "--username": "username",
    "--password": "password",
}
SET_HELP = "A setting of the kind, key=value; repeat. " + "; ".join(
    f"{name}: {', '.join(kind.settings()) or 'none'}" for name, kind in KINDS.items()
)


def _settings(
    kind: str, pairs: list[str], shorthands: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings given and, for each, how the user typed it (to name it in errors)."""
    settings: dict[str, Any] = {}
    typed: dict[str, str] = {}
    for option, value in shorthands.items():
        if value is not None:
            settings[SHORTHANDS[option]] = value
            typed[SHORTHANDS[option]] = option
    plugin = kind_named(kind)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            fail(f"--set takes key=value, got {pair!r}", code=2)
        if key in typed:
            fail(f"{key} is given twice ({typed[key]} and --set {key})", code=2)
        try:
            settings[key] = plugin.from_text(key, text)
        except AuditorError as error:
            fail(f"--set {key}: {error}")
        typed[key] = f"--set {key}"
    return settings, typed


def _fail_naming_option(error: AuditorError, typed: dict[str, str]) -> NoReturn:
    option = typed.get(error.field or "")
    fail(f"{option}: {error}" if option else str(error))


def channel_add(
    project: str = typer.Argument(..., help="Project slug."),
    name: str = typer.Argument(..., help="Channel name."),
    kind: str = typer.Option(..., "--kind", help=f"{', '.join(KINDS)}."),
    settings: list[str] = typer.Option([], "--set", help=SET_HELP),
    url: str | None = typer.Option(None, "--url", help="= --set url=URL (webhook)."),
    secret: str | None = typer.Option(
        None, "--secret", help="= --set secret=S (webhook; default: generated)."
    ),
    host: str | None = typer.Option(None, "--smtp-host", help="= --set email_host=H."),
    port: int | None = typer.Option(None, "--smtp-port", help="= --set email_port=N (25)."),
    sender: str | None = typer.Option(None, "--from", help="= --set email_from=A."),
    to: list[str] = typer.Option([], "--to", help="Recipient; repeat (= --set email_to=A,B)."),
    starttls: bool | None = typer.Option(
        None, "--starttls/--no-starttls", help="= --set starttls=true|false."
    ),
    username: str | None = typer.Option(None, "--username", help="= --set username=U."),
    password: str | None = typer.Option(None, "--password", help="= --set password=P."),
    timeout: float = typer.Option(10.0, "--timeout"),
) -> None:
    """Add a channel. A webhook's signing secret, when generated, is printed once."""
    shorthands = {
        "--url": url,
        "--secret": secret,
        "--smtp-host": host,
        "--smtp-port": port,
        "--from": sender,
        "--to": list(to) or None,
        "--starttls": starttls,
        "--username": username,
        "--password": password,
    }
    typed: dict[str, str] = {}
    try:
        config, typed = _settings(kind, settings, shorthands)
        spec = ChannelSpec(name=name, kind=kind, config=config, timeout_seconds=timeout)
        view, made_secret = add_channel(unit_of_work(), project, spec)
    except AuditorError as error:
        _fail_naming_option(error, typed)
    typer.echo(f"added {view.kind} channel {view.name}")
    if made_secret:
        typer.echo(f"signing secret (shown once): {made_secret}")


def channel_update(
    project: str = typer.Argument(..., help="Project slug."),
    name: str = typer.Argument(..., help="Channel name."),
    settings: list[str] = typer.Option([], "--set", help=SET_HELP),
    timeout: float | None = typer.Option(None, "--timeout"),
) -> None:
    """Change a channel's settings; the others (secrets included) stay, and its rules keep
    it. Rotate a webhook secret: --set secret=NEW; an SMTP password: --set password=NEW."""
    if not settings and timeout is None:
        fail("nothing to change: give --set key=value or --timeout", code=2)
    typed: dict[str, str] = {}
    try:
        found = {v.name: v.kind for v in list_channels(unit_of_work(read_only=True), project)}
        if name not in found:
            fail(f"project {project!r} has no channel {name!r}")
        config, typed = _settings(found[name], settings, {})
        view = update_channel(unit_of_work(), project, name, ChannelChange(config, timeout))
    except AuditorError as error:
        _fail_naming_option(error, typed)
    typer.echo(f"updated {view.kind} channel {view.name}: {_describe(view.settings)}")


def _describe(settings: dict[str, Any]) -> str:
    shown = (
        f"{key}={','.join(map(str, value)) if isinstance(value, list) else value}"
        for key, value in settings.items()
    )
    return " ".join(shown) or "-"


def channel_list(project: str = typer.Argument(..., help="Project slug.")) -> None:
    """The project's channels and their settings (secrets are never shown)."""
    views = list_channels(unit_of_work(read_only=True), project)
    for v in views:
        typer.echo(f"{v.name:<16} {v.kind:<8} {_describe(v.settings)}")


def channel_remove(project: str, name: str) -> None:
    """Remove a channel no rule uses."""
    remove_channel(unit_of_work(), project, name)
    typer.echo(f"removed channel {name}")
