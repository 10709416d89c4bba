"""``auditor alerts silence | silences | unsilence`` (wired by ``auditor.cli.alerts``)."""

from __future__ import annotations

from datetime import UTC, datetime

import typer

from auditor.cli._alert_format import parse_duration, short_time
from auditor.cli._common import fail, parse_time, unit_of_work
from auditor.services.alerts.silences import add_silence, end_silence, list_silences


def silence(
    project: str = typer.Argument(..., help="Project slug."),
    rule: str | None = typer.Option(None, "--rule", help="Rule id or name (default: all)."),
    subject: str | None = typer.Option(None, "--subject", help="project, rater:ID, model:ID"),
    until: str | None = typer.Option(None, "--until", help="ISO 8601 end."),
    for_: str | None = typer.Option(None, "--for", help="Or a duration, e.g. 2h."),
    reason: str = typer.Option("", "--reason"),
    by: str = typer.Option("", "--by", help="Who silences it."),
) -> None:
    """Mute notices of a rule and/or subject until a time (states keep moving)."""
    if (until is None) == (for_ is None):
        fail("give exactly one of --until TIME or --for DURATION", 2)
    now = datetime.now(UTC)
    try:
        ends = parse_time(until, "--until") if until else now + parse_duration(for_ or "", "--for")
    except OverflowError:
        fail(f"--for {for_}: too long (silences end before 2100-01-01)", 2)
    view = add_silence(
        unit_of_work(),
        project,
        ends_at=ends,
        rule_id=rule,
        subject=subject,
        starts_at=now,
        reason=reason,
        created_by=by,
    )
    typer.echo(f"silence {view.id} until {short_time(view.ends_at)}")


def silences(
    project: str = typer.Argument(..., help="Project slug."),
    all_: bool = typer.Option(False, "--all", help="Include ended silences."),
) -> None:
    """Active (or all) silences."""
    views = list_silences(unit_of_work(read_only=True), project, include_ended=all_)
    for v in views:
        typer.echo(
            f"{v.id:>4}  {short_time(v.starts_at)} .. {short_time(v.ends_at)}  "
            f"rule {v.rule_id or '*'} subject {v.subject or '*'}  {v.reason}"
        )


def unsilence(project: str, silence_id: int) -> None:
    """End a silence now."""
    end_silence(unit_of_work(), project, silence_id)
    typer.echo(f"silence {silence_id} ended")
