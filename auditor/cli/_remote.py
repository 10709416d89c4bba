"""``auditor --url URL --key KEY <read command>``: the read commands on a remote service,
through ``auditor.client``, with the output of the local path.

``--url``/``--key`` (or ``AUDITOR_URL``/``AUDITOR_KEY``) are options of the root command; the
root checks them before the command runs and hands them over here. A read command asks
``remote_client(project)``: a client when a service was named, None to read
``AUDITOR_DATABASE_URL`` as before. Nothing here imports httpx or the client until a command
runs remotely, so ``auditor --help`` stays fast.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from auditor.cli._common import fail

if TYPE_CHECKING:
    from auditor.client import Client

# The commands that read through the client: (command,) or (group, command).
REMOTE_READS = frozenset(
    {
        ("history",),
        ("snapshot",),
        ("imports", "list"),
        ("imports", "show"),
        ("alerts", "status"),
        ("alerts", "history"),
        ("repeats", "status"),
    }
)

URL = typer.Option(
    None,
    "--url",
    envvar="AUDITOR_URL",
    help="A remote service (http://host:8000) for the read commands: history, snapshot, "
    "imports list|show, alerts status|history, repeats status. Needs --key.",
)
KEY = typer.Option(
    None, "--key", envvar="AUDITOR_KEY", help="The project key for --url (read or admin role)."
)


@dataclass(frozen=True)
class Remote:
    url: str
    key: str


_REMOTE: ContextVar[Remote | None] = ContextVar("auditor_remote", default=None)


def remote_for(args: list[str], url: str | None, key: str | None, url_given: bool) -> Remote | None:
    """The service the command ``args`` reads, if any: a read command with a URL. A URL
    given on the command line to another command is a usage error (exit 2); one from
    ``AUDITOR_URL`` applies to the read commands only, so the others run locally."""
    if not url:
        return None
    command = next((c for c in (tuple(args[:2]), tuple(args[:1])) if c in REMOTE_READS), None)
    group_help = len(args) == 1 and any(c[0] == args[0] for c in REMOTE_READS)
    if command is None:
        if url_given and args and not group_help and not {"--help", "-h"} & set(args):
            shown = ", ".join(" ".join(c) for c in sorted(REMOTE_READS))
            fail(f"--url: `{' '.join(args[:2])}` works on the database only; remote: {shown}", 2)
        return None
    if not key:
        fail(
            "a remote service (--url or AUDITOR_URL) needs a project key: --key KEY or AUDITOR_KEY",
            2,
        )
    return Remote(url, key)


def set_remote(remote: Remote | None) -> None:
    _REMOTE.set(remote)


def remote_client(project: str) -> Client | None:
    """A client of the service named by --url for ``project``; None: read the database."""
    remote = _REMOTE.get()
    if remote is None:
        return None
    from auditor.client import Client, RetryPolicy

    # A person waits at the prompt: a few tries within a minute, not a pipeline's patience.
    return Client(
        remote.url, remote.key, project=project, retry=RetryPolicy(attempts=4, give_up_after=60)
    )
