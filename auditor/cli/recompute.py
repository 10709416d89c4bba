"""Commands over snapshots: recompute, history, snapshot, run (the embedded scheduler).

Shell only: parse, call one service, render.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import signal
import sys
import threading
from datetime import timedelta
from enum import StrEnum
from typing import Any

import typer

from auditor.cli._common import command_clock, fail, parse_time, unit_of_work
from auditor.cli._hints import how_to_get_a_snapshot
from auditor.cli._remote import remote_client
from auditor.cli._remote_reads import remote_history, remote_snapshot
from auditor.config import get_settings
from auditor.errors import NotFound
from auditor.services.queries.history import metric_history, snapshot_view
from auditor.services.queries.reverts import RevertMark
from auditor.services.recompute.embedded import run_embedded, start_in_thread
from auditor.services.recompute.kept_verify import Verification, rebuild_verified
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.snapshots.scopes import CUMULATIVE
from auditor.stats.catalogue import metric_help
from auditor.storage.db import display_url


class OutputFormat(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def _with_reverts(lines: list[str], points: list[Any], reverts: list[RevertMark]) -> list[str]:
    """The table's rows with a line per revert before the first row computed after it."""
    pending = sorted(reverts, key=lambda mark: mark.at)
    out = lines[:1]
    for line, point in zip(lines[1:], points, strict=True):
        while pending and point.computed_at > pending[0].at:
            out.append(_revert_line(pending.pop(0)))
        out.append(line)
    return out + [_revert_line(mark) for mark in pending]


def _revert_line(mark: RevertMark) -> str:
    return f"-- {mark.at.isoformat(timespec='seconds')} {mark.text}"


def _render_history(
    points: list[Any], output: OutputFormat, reverts: list[RevertMark] | None = None
) -> str:
    fields = ("as_of", "scope", "value", "ci_low", "ci_high", "n", "reason")
    records = [
        {
            "as_of": p.as_of.isoformat(),
            "scope": p.scope,
            "value": p.value,
            "ci_low": p.ci_low,
            "ci_high": p.ci_high,
            "n": p.n,
            "reason": p.reason,
        }
        for p in points
    ]
    if output is OutputFormat.JSON:
        return json.dumps(records, indent=2)
    if output is OutputFormat.CSV:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        return buffer.getvalue().rstrip("\n")
    width = max([26] + [len(r["as_of"]) for r in records])  # microseconds make it longer
    lines = [f"{'as_of':<{width}} {'scope':<10} {'value':>8} {'ci_low':>8} {'ci_high':>8} {'n':>7}"]
    for r in records:
        lines.append(
            f"{r['as_of']:<{width}} {r['scope']:<10} {_number(r['value']):>8} "
            f"{_number(r['ci_low']):>8} {_number(r['ci_high']):>8} {r['n'] or '':>7}"
            + (f"  {r['reason']}" if r["reason"] else "")
        )
    return "\n".join(_with_reverts(lines, points, reverts or []))


def recompute(
    project: str = typer.Argument(..., help="Project slug."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Write every scope's snapshot even when nothing changed (at the next tick when "
        "this one has its snapshot).",
    ),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="Then rebuild the kept statistics from every label and check that they agree "
        "with the incrementally kept ones to 1e-9 (exit status 1 if not).",
    ),
) -> None:
    """Recompute a project's dirty scopes now and write their snapshots."""
    uow = unit_of_work()
    project_id = find_project_id(uow, project)
    result = recompute_project(
        uow,
        project_id,
        force=force,
        scan_interval_seconds=get_settings().scan_interval_seconds,
    )
    if result.status == "locked":
        fail(f"another recompute of {project!r} is running; try again when it ends")
    typer.echo(describe_recompute(project, result))
    if rebuild:
        verified = rebuild_verified(uow, project_id)
        if verified is None:
            fail(f"another recompute of {project!r} is running; try again when it ends")
        typer.echo(_render_verification(verified))
        if not verified.agrees:
            raise typer.Exit(1)


def describe_recompute(project: str, result: Any) -> str:
    """What a recompute did, success first: "recomputed demo at tick 5: wrote ..." with why
    each scope was (not) written on the lines below; "nothing changed" only when nothing did
    (issue 27: "never computed" lines printed first read like errors)."""
    why = "; ".join(f"{d.scope.name}: {d.reason}" for d in result.decisions)
    if result.written:
        written = ", ".join(
            f"{w.scope} ({w.n_labels} label{'s' if w.n_labels != 1 else ''}{_served(w.rendered)})"
            for w in result.written
        )
        seconds = result.load_seconds + result.compute_seconds + result.write_seconds
        return (
            f"recomputed {project} at tick {result.tick}: wrote {written} in {seconds:.2f} s "
            f"(load {result.load_seconds:.2f}, compute {result.compute_seconds:.2f}, write "
            f"{result.write_seconds:.2f})\n  why: {why}"
        )
    if result.status == "conflict":
        return (
            f"{project}: another recompute wrote tick {result.tick} first; its snapshot is the "
            f"latest (why: {why})"
        )
    reasons = {d.reason for d in result.decisions}
    if reasons == {"project has no labels"}:
        return f"{project}: no labels yet, so no snapshot to write (import labels first)"
    return (
        f"{project}: nothing changed since the latest snapshot (no new, deleted or reverted "
        f"label; windows unmoved), so nothing to write; --force writes one anyway\n  why: {why}"
    )


def _served(rendered: dict[str, Any]) -> str:
    """ ", from kept statistics (carried: ...)" for a snapshot served from them."""
    source = rendered.get("source")
    if not source:
        return ""
    carried = source.get("carried") or []
    return ", from kept statistics" + (f"; carried: {', '.join(carried)}" if carried else "")


def _render_verification(verified: Verification) -> str:
    own = verified.largest_difference <= 1e-9
    lines = [
        f"kept statistics at label {verified.watermark} ({verified.label_count} labels): "
        f"largest difference from a rebuild {verified.largest_difference:.3g} "
        + ("(agree)" if own else "(DISAGREE: the rebuilt state is kept)")
    ]
    for name, (kept_value, rebuilt_value) in verified.estimates.items():
        lines.append(
            f"  {name:<22} kept {_number(kept_value):>8}  rebuilt {_number(rebuilt_value):>8}"
        )
    for window in verified.windows:
        lines.append(
            f"window {window.scope}: kept statistics at label {window.watermark} "
            f"({window.label_count} labels in the window): largest difference from a rebuild "
            f"{window.largest_difference:.3g} "
            + ("(agree)" if window.agrees else "(DISAGREE: the rebuilt state is kept)")
        )
    return "\n".join(lines)


def history(
    project: str = typer.Argument(..., help="Project slug."),
    metric: str = typer.Option(..., "--metric", help=metric_help()),
    subject: str | None = typer.Option(
        None, "--subject", help="project (default), rater:ID, model:ID or pair:A|B."
    ),
    scope: list[str] = typer.Option(
        [], "--scope", help="cumulative or a window such as 7d; repeat for several."
    ),
    since: str | None = typer.Option(None, "--since", help="ISO 8601, inclusive."),
    until: str | None = typer.Option(None, "--until", help="ISO 8601, inclusive."),
    output: OutputFormat = typer.Option(OutputFormat.TABLE, "--format"),
) -> None:
    """The values of one metric over time, one row per snapshot.

    In the table, a line where an import was reverted (its labels left the project)."""
    since_at = None if since is None else parse_time(since, "--since")
    until_at = None if until is None else parse_time(until, "--until")
    client = remote_client(project)
    points: list[Any]  # the storage's rows, or the client's records of them
    if client is not None:  # the same rows from a remote service (auditor --url)
        points, shown, hint = remote_history(client, metric, subject, scope, since_at, until_at)
    else:
        points = metric_history(
            unit_of_work(),
            project,
            metric,
            subject=subject,
            scopes=scope or None,
            since=since_at,
            until=until_at,
        )
        hint = how_to_get_a_snapshot(project) if not points else None
        shown = []
        if hint is None and output is OutputFormat.TABLE:
            from auditor.services.queries.reverts import project_reverts

            shown = project_reverts(unit_of_work(), project, since_at, until_at)
    if hint is not None:
        typer.echo(hint, err=True)  # stdout keeps its shape (an empty list, a header)
    if hint is None or output is not OutputFormat.TABLE:
        typer.echo(_render_history(points, output, shown))


def snapshot(
    project: str = typer.Argument(..., help="Project slug."),
    at: str | None = typer.Option(None, "--at", help="ISO 8601; default: the latest."),
    scope: str = typer.Option(CUMULATIVE, "--scope", help="cumulative or e.g. 7d."),
) -> None:
    """One snapshot as JSON: the `auditor stats --json` shape plus a "snapshot" object."""
    at_time = None if at is None else parse_time(at, "--at")
    client = remote_client(project)
    if client is not None:
        typer.echo(json.dumps(remote_snapshot(client, scope, at_time), indent=2))
        return
    try:
        view = snapshot_view(
            unit_of_work(),
            project,
            scope=scope,
            at=at_time,
        )
    except NotFound as error:  # say how to get the first one
        fail((how_to_get_a_snapshot(project, scope) if at is None else None) or str(error))
    typer.echo(json.dumps(view, indent=2))


def run(
    ctx: typer.Context,
    interval: float | None = typer.Option(
        None,
        "--interval",
        help="Seconds between scans (default AUDITOR_SCAN_INTERVAL_SECONDS).",
    ),
    once: bool = typer.Option(False, "--once", help="One scan and its recomputes, then exit."),
    embedded: bool = typer.Option(
        False, "--embedded", help="Run in-process even when a broker is configured."
    ),
) -> None:
    """Embedded scheduler: scan for dirty projects and recompute them on a timer."""
    settings = get_settings()
    if settings.broker_url and not embedded:
        fail(
            "AUDITOR_BROKER_URL is set: recomputes run on Celery "
            "(`celery -A workers worker` and `celery -A workers beat`); "
            "pass --embedded to run them in this process anyway",
            2,
        )
    every = interval if interval is not None else settings.scan_interval_seconds
    if every <= 0:
        fail("--interval must be positive", 2)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s"
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    where = display_url(settings.database_url)
    typer.echo(
        f"auditor run: one scan of {where}"
        if once
        else f"auditor run: scanning {where} every {every:g} s (Ctrl-C stops)",
        err=True,
    )
    try:
        if once:
            done: list[Any] = []
            run_embedded(
                unit_of_work(), every, stop, clock=command_clock(ctx), max_cycles=1,
                on_cycle=done.extend,
            )  # fmt: skip
            uow = unit_of_work()
            with uow:
                slugs = {p.id: p.slug for p in uow.projects.all()}
            typer.echo(describe_cycle(done, slugs))
        else:
            # Recomputes and notice delivery on threads of their own (a slow receiver
            # never holds up recomputes); this thread waits for Ctrl-C or SIGTERM.
            ttl = timedelta(seconds=settings.idempotency_ttl_seconds)
            thread, threads_stop, _ = start_in_thread(unit_of_work, every, idempotency_ttl=ttl)
            try:
                while not stop.wait(0.5):
                    pass
            finally:
                threads_stop.set()
                thread.join(60)
    except KeyboardInterrupt:
        stop.set()
    sys.stdout.flush()


def describe_cycle(results: list[Any], slugs: dict[int, str]) -> str:
    """What one scan did (``auditor run --once``): each project recomputed and what it wrote,
    or that no project had changed. ``slugs``: project id -> slug."""
    if not results:
        return (
            "scan done: no project due for a recompute (no change since its latest snapshot, "
            "or this tick has one already); nothing written"
        )
    lines = [f"scan done: {len(results)} project{'s' if len(results) != 1 else ''} recomputed"]
    for result in results:
        name = slugs.get(result.project_id, f"project {result.project_id}")
        lines.append("  " + describe_recompute(name, result).replace("\n", "\n  "))
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    for name, command in (
        ("recompute", recompute),
        ("history", history),
        ("snapshot", snapshot),
        ("run", run),
    ):
        app.command(name)(command)
