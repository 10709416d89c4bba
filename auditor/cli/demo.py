"""``auditor demo``: an ongoing labeling project over simulated days, recomputed on schedule.

Runs on the embedded default: a fresh SQLite file (``./auditor-demo.db``, recreated each run so
reruns are clean), the same ingestion, recompute and history services as the deployment, on
a simulated clock. See ``auditor.services.demo.simulation`` for the story.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import typer

from auditor.cli._common import fail, parse_time
from auditor.errors import Conflict
from auditor.services.alerts.demo import describe, drain_notifications, install_demo_alerts
from auditor.services.demo.simulation import (
    DEGRADED_DAYS,
    DEGRADING_RATER,
    HISTORY_COLUMNS,
    DemoConfig,
    DemoRun,
    daily_history,
    demo_start,
    run_demo,
)
from auditor.storage import migrate
from auditor.storage.db import is_sqlite, make_engine
from auditor.storage.unit_of_work import UnitOfWork

DEFAULT_DATABASE = "sqlite:///auditor-demo.db"


def _fresh_sqlite(url: str) -> None:
    path = Path(url.split("sqlite:///", 1)[1])
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _cell(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def _change(rows: list, column: str, before: int, after: int) -> str:
    a, b = rows[before - 1].values[column], rows[after - 1].values[column]
    return f"{_cell(a).strip()} -> {_cell(b).strip()}"


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        seed: int = typer.Option(7, "--seed", help="Same seed, same run."),
        days: int = typer.Option(24, "--days", min=4, max=60, help="Simulated days."),
        database: str = typer.Option(
            DEFAULT_DATABASE,
            "--database",
            help="Database URL. A SQLite file is recreated; another database must not "
            "have a project 'demo' yet.",
        ),
        ends_at: str | None = typer.Option(
            None,
            "--ends-at",
            help="ISO 8601 time the simulated days end at (default: now, to the hour). "
            "With --seed, pins the whole output.",
        ),
    ) -> None:
        """Simulate a labeling project for DAYS days and show reliability over time."""
        started = time.perf_counter()
        end = None if ends_at is None else parse_time(ends_at, "--ends-at")
        if is_sqlite(database):
            if not database.startswith("sqlite:///") or ":memory:" in database:
                fail("--database: the demo needs a SQLite file URL such as sqlite:///demo.db", 2)
            _fresh_sqlite(database)
        migrate.upgrade(database)
        engine = make_engine(database)
        # The end fixed once, so the banner and the run agree even across an hour's turn.
        start = demo_start(DemoConfig(days=days, end=end))
        config = DemoConfig(seed=seed, days=days, end=start + timedelta(days=days))
        typer.echo(
            f"Simulating {days} days of labeling (seed {seed}), {start:%Y-%m-%d %H:%M} to "
            f"{start + timedelta(days=days):%Y-%m-%d %H:%M} UTC, into {database}: 10 raters, "
            f"1 model, hidden repeats; {DEGRADING_RATER} degrades from day {days // 2 + 1}"
            f" and is retrained after {DEGRADED_DAYS} days."
        )
        notices: list[str] = []  # alerts delivered through the outbox, one line each

        def progress(day: int, run: DemoRun) -> None:
            typer.echo(
                f"  day {day + 1:>2}: {run.labels:>6} labels ingested in {run.batches} batches, "
                f"{run.snapshots} snapshots",
                err=True,
            )
            # Alerts (issue 5): send what the day's snapshots queued; print them at the end.
            notices.extend(describe(n) for n in drain_notifications(UnitOfWork(engine)))

        try:
            run = run_demo(UnitOfWork(engine), config, progress, setup=install_demo_alerts)
        except Conflict as error:
            fail(f"{error}; use a fresh database (--database)")
        rows = daily_history(UnitOfWork(engine, read_only=True), config, run.start)
        engine.dispose()

        titles = [title for title, *_ in HISTORY_COLUMNS]
        typer.echo("")
        typer.echo("History at the end of each day (the last snapshot that day):")
        typer.echo("day  " + "  ".join(f"{t:>12}" for t in titles))
        for row in rows:
            mark = " <- degradation starts" if row.day == days // 2 + 1 else ""
            if row.day == days // 2 + DEGRADED_DAYS + 1:
                mark = " <- retrained"
            cells = "  ".join(f"{_cell(row.values[t]):>12}" for t in titles)
            typer.echo(f"{row.day:>3}  {cells}{mark}")
        half, last = days // 2, min(days, days // 2 + DEGRADED_DAYS)  # last degraded day
        sa_cum, sa_win = titles[4], titles[5]
        typer.echo("")
        typer.echo(
            f"{DEGRADING_RATER}'s self-agreement, day {half} -> day {last}: last 7 days "
            f"{_change(rows, sa_win, half, last)}, cumulative {_change(rows, sa_cum, half, last)}"
        )
        typer.echo(
            f"{DEGRADING_RATER} against the group (S, last 7 days): "
            f"{_change(rows, titles[6], half, last)}; "
            f"group kappa_S, last 7 days: {_change(rows, titles[1], half, last)}"
        )
        typer.echo("")
        typer.echo("Alerts delivered (default rules + a rater's 7-day S against the group < 0.7):")
        typer.echo("\n".join(f"  {line}" for line in notices) or "  none")
        typer.echo(
            f"{run.labels} labels ({run.repeats} repeated presentations), {run.snapshots} "
            f"snapshots in {time.perf_counter() - started:.1f} s."
        )
        typer.echo(
            "Explore (`auditor` is in .venv/bin: `source .venv/bin/activate` first): "
            f"export AUDITOR_DATABASE_URL={database}; auditor history demo "
            f"--metric self_agreement --subject rater:{DEGRADING_RATER} --scope 7d; "
            "auditor alerts history demo; auditor serve"
        )
