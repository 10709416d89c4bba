"""``auditor label-studio``: a project's Label Studio settings, the sync that recovers what the
webhook missed, and hidden repeats as new Label Studio tasks (docs/integrations.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import typer

from auditor.cli._common import fail, unit_of_work


def _cleared(value: str | None) -> object:
    """An option's value for ``update_settings``: not given, "" (clear it), or the value."""
    from auditor.services.label_studio.settings import UNSET

    if value is None:
        return UNSET
    return None if value == "" else value


def _show(view: Any, rejected: Any) -> list[str]:
    at = view.last_sync_at.isoformat(timespec="seconds") if view.last_sync_at else "never"
    lines = [
        f"project {view.project}",
        f"  item field   {view.item_field or 'the task id'}",
        f"  from_name    {view.from_name or 'the one choices control'}",
        f"  predictions  {view.predictions}",
        f"  url          {view.url or '-'}",
        f"  ls project   {view.ls_project if view.ls_project is not None else '-'}",
        f"  token        {'set' if view.token_set else 'not set'}",
        f"  sync every   {f'{view.sync_minutes} min' if view.sync_minutes else 'not scheduled'}",
        f"  last sync    {at}" + (f" ({view.last_sync_status})" if view.last_sync_status else ""),
    ]
    if rejected is not None and rejected.total:
        by_status = ", ".join(f"{s}: {n}" for s, n in sorted(rejected.by_status.items()))
        last = rejected.last_at.isoformat(timespec="seconds") if rejected.last_at else "-"
        lines.append(
            f"  refused calls {rejected.since_sync} since the last sync"
            + (f" ({by_status})" if by_status else "")
            + f", {rejected.total} in all; last {last}: {rejected.last_message}"
        )
    return lines


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Label Studio: settings, sync, and hidden repeats as its tasks.")
    app.add_typer(group, name="label-studio", no_args_is_help=True)

    @group.command("settings")
    def settings(
        project: str = typer.Argument(..., help="Project slug."),
        item_field: str | None = typer.Option(
            None, help='The item is data.<key> of the task ("" : the task id).'
        ),
        from_name: str | None = typer.Option(
            None, help='The choices control that holds the label ("" : the only one).'
        ),
        predictions: str | None = typer.Option(
            None, help="model: predictions are model raters; ignore: not read."
        ),
        url: str | None = typer.Option(None, help="Label Studio's address, for its API."),
        token: str | None = typer.Option(
            None, help="An access token of Label Studio's API (never shown)."
        ),
        ls_project: int | None = typer.Option(None, help="The Label Studio project's id."),
        sync_every: int | None = typer.Option(
            None, min=0, help="Minutes between scheduled syncs (0: no schedule)."
        ),
    ) -> None:
        """Show PROJECT's Label Studio settings, changing those given (the webhook, auditor
        import and the sync all read with them). Run the sync after changing the item field,
        from_name or predictions: it re-maps the labels stored."""
        from auditor.services.label_studio.rejections import rejection_summary
        from auditor.services.label_studio.settings import UNSET, update_settings

        changes = {
            "item_field": _cleared(item_field),
            "from_name": _cleared(from_name),
            "predictions": UNSET if predictions is None else predictions,
            "url": _cleared(url),
            "token": _cleared(token),
            "ls_project": UNSET if ls_project is None else ls_project,
            "sync_minutes": UNSET if sync_every is None else (sync_every or None),
        }
        view = update_settings(unit_of_work(), project, **changes)
        for line in _show(view, rejection_summary(unit_of_work(read_only=True), project)):
            typer.echo(line)

    @group.command("sync")
    def sync(
        project: str = typer.Argument(..., help="Project slug."),
        export: Path | None = typer.Option(
            None, exists=True, dir_okay=False, help="A Label Studio JSON export (all tasks)."
        ),
        url: str | None = typer.Option(None, help="Label Studio's address (else the settings')."),
        token: str | None = typer.Option(None, help="An access token of its API."),
        ls_project: int | None = typer.Option(None, help="The Label Studio project's id."),
        as_json: bool = typer.Option(False, "--json", help="The counts as JSON."),
    ) -> None:
        """Make PROJECT's Label Studio labels equal to Label Studio's annotations now:
        create what is missing, update what changed, delete what is gone. The recovery after
        any outage of the webhook; a second run changes nothing."""
        from auditor.services.label_studio.sync import sync_from_api, sync_project

        if export is not None:
            if url or token or ls_project is not None:
                fail("give --export, or --url/--token/--ls-project, not both", 2)
            try:
                tasks = json.loads(export.read_bytes().decode("utf-8-sig"))
            except (UnicodeDecodeError, ValueError) as error:
                fail(f"{export.name}: not a JSON document: {error}")
            result = sync_project(unit_of_work(), project, tasks)
        else:
            result = sync_from_api(
                unit_of_work(), project, url=url, token=token, ls_project=ls_project
            )
        if as_json:
            typer.echo(json.dumps(dataclasses.asdict(result), indent=2))
            return
        typer.echo(
            f"{project}: {result.tasks} tasks, {result.annotations} annotations, "
            f"{result.predictions} predictions: {result.summary()}"
        )
        if result.kept_newer or result.deleted_earlier:
            typer.echo(
                f"  kept {result.kept_newer} label(s) newer than the export; "
                f"{result.deleted_earlier} annotation(s) deleted since it was taken"
            )
        for reason, n in sorted(result.skipped.items()):
            typer.echo(f"  skipped {n}: {reason}")

    @group.command("repeats")
    def repeats(
        project: str = typer.Argument(..., help="Project slug."),
        rater: str = typer.Argument(..., help="Rater id (her Label Studio user id)."),
        n: int = typer.Option(10, "-n", min=1, max=1000, help="At most this many items."),
        request_id: str | None = typer.Option(
            None, help="The same request id plans and creates nothing twice."
        ),
        assign: bool = typer.Option(
            False, help="Enterprise: assign each new task to RATER (Community: no queues)."
        ),
    ) -> None:
        """Plan hidden repeats for RATER and create each as a new Label Studio task that
        carries the original item (docs/repeats.md, "Label Studio")."""
        from auditor.services.label_studio.repeats import plan_label_studio_repeats

        done = plan_label_studio_repeats(
            unit_of_work(), project, rater, n, request_id=request_id, assign=assign
        )
        for item, task in done.tasks.items():
            others = done.also_planned.get(item, [])
            also = f"\talso planned for {', '.join(others)}" if others else ""
            typer.echo(f"{item}\ttask {task}{also}")
        for problem in done.problems:
            typer.echo(f"error: {problem}", err=True)
        plan = done.plan
        typer.echo(
            f"{plan['rater']}: {len(done.tasks)} task(s) created, {plan['outstanding']} "
            f"outstanding, {plan['have']} repeated items of {plan['needed']} needed"
        )
        if done.problems:
            raise typer.Exit(1)
