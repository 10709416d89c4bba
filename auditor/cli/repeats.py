"""``auditor repeats``: plan hidden repeats for a rater, see each rater's coverage, and change
the planner's settings (docs/repeats.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import typer

from auditor.cli._common import unit_of_work
from auditor.cli._remote import remote_client
from auditor.services.repeats.planner import plan_repeats, repeat_status, update_repeat_settings


def register(app: typer.Typer) -> None:
    repeats = typer.Typer(help="Hidden repeats: plan them, watch their coverage.")
    app.add_typer(repeats, name="repeats", no_args_is_help=True)

    @repeats.command("plan")
    def plan(
        project: str = typer.Argument(..., help="Project slug."),
        rater: str = typer.Argument(..., help="Rater id."),
        n: int = typer.Option(10, "-n", min=0, max=1000, help="At most this many items."),
        request_id: str | None = typer.Option(
            None, help="The same request id gets the same plan again."
        ),
        as_json: bool = typer.Option(False, "--json", help="The API's answer as JSON."),
    ) -> None:
        """Propose items RATER should see again (recorded as planned; -n 0 only counts)."""
        answer = plan_repeats(unit_of_work(), project, rater, n, request_id=request_id)
        if as_json:
            typer.echo(json.dumps(answer, indent=2))
            return
        for entry in answer["items"]:
            typer.echo(f"{entry['item']}\t{entry['first_labeled_at']}\t{entry['reason']}")
        typer.echo(
            f"{answer['rater']}: {len(answer['items'])} planned now, "
            f"{answer['outstanding']} outstanding, {answer['have']} repeated items "
            f"of {answer['needed']} needed"
        )

    @repeats.command("status")
    def status(project: str = typer.Argument(..., help="Project slug.")) -> None:
        """Per rater: repeats planned, fulfilled, expired, outstanding; repeated items she has
        and needs for the wanted precision of her self-agreement."""
        client = remote_client(project)
        rows: Sequence[Any]  # the service's rows, or the client's records of them
        if client is not None:
            with client:
                rows = client.repeat_report()
        else:
            rows = repeat_status(unit_of_work(), project)
        header = ("rater", "planned", "fulfilled", "expired", "open", "have", "needed", "SA")
        typer.echo("{:<16} {:>8} {:>9} {:>8} {:>6} {:>6} {:>7} {:>6}".format(*header))
        for r in rows:
            sa = "-" if r.self_agreement is None else f"{r.self_agreement:.3f}"
            short = "" if r.have >= r.needed else "  <- short"
            typer.echo(
                f"{r.rater:<16} {r.planned:>8} {r.fulfilled:>9} {r.expired:>8} "
                f"{r.outstanding:>6} {r.have:>6} {r.needed:>7} {sa:>6}{short}"
            )

    @repeats.command("settings")
    def settings(
        project: str = typer.Argument(..., help="Project slug."),
        share: float | None = typer.Option(None, help="Share of a rater's items shown again."),
        min_gap_hours: float | None = typer.Option(None, help="Least hours before a repeat."),
        min_gap_items: int | None = typer.Option(None, help="Least other labels in between."),
        half_width: float | None = typer.Option(None, help="Wanted SA interval half-width."),
        open_days: float | None = typer.Option(None, help="Days a planned repeat stays open."),
    ) -> None:
        """Show the planner's settings of PROJECT, changing those given."""
        given = {
            "share": share,
            "min_gap_hours": min_gap_hours,
            "min_gap_items": min_gap_items,
            "half_width": half_width,
            "open_days": open_days,
        }
        now = update_repeat_settings(
            unit_of_work(), project, **{k: v for k, v in given.items() if v is not None}
        )
        typer.echo(
            f"share {now.share:g}, gap {now.min_gap_hours:g} h and {now.min_gap_items} items, "
            f"half-width {now.half_width:g}, open {now.open_days:g} days"
        )
