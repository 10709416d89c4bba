"""``auditor report PROJECT --out report.html [--png DIR] [--since 7d]``: the dashboard's
project page as one self-contained HTML file (with what changed over ``--since``), and its
figures as PNG images."""

from __future__ import annotations

from pathlib import Path

import typer

from auditor.cli._alert_format import parse_duration
from auditor.cli._common import fail
from auditor.config import get_settings
from auditor.services.queries.changes import changes_since
from auditor.services.queries.dashboard import project_detail
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

HTML_SUFFIXES = (".html", ".htm")


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        project: str = typer.Argument(..., help="Project slug."),
        out: Path | None = typer.Option(
            None, "--out", help="Write the HTML report here (one self-contained file)."
        ),
        png: Path | None = typer.Option(
            None, "--png", help="Write the figures as PNG files into this directory."
        ),
        since: str | None = typer.Option(
            None,
            "--since",
            help="Say what changed over this period (e.g. 7d, 24h): the headline measures "
            "then and now, raters who arrived or left, alerts that began or ended.",
        ),
    ) -> None:
        """Write a project's reliability report: HTML with inline charts, and/or PNG plots."""
        if out is None and png is None:
            fail("nothing to write: give --out FILE.html and/or --png DIR", code=2)
        # --out writes HTML: a file named for another format would hold HTML under its name.
        if out is not None and out.suffix and out.suffix.lower() not in HTML_SUFFIXES:
            hint = " (PNG figures: --png DIR writes one .png per chart)"
            fail(
                f"--out writes HTML; {out} ends in {out.suffix!r}: name it .html"
                + (hint if out.suffix.lower() == ".png" else ""),
                code=2,
            )
        period = parse_duration(since, "--since") if since is not None else None
        if period is not None and period.total_seconds() <= 0:
            fail(f"--since: give a period longer than 0, e.g. 7d (got {since!r})", code=2)
        engine = make_engine(get_settings().database_url)
        try:
            # a document has no link to follow: every rater and the whole pairwise summary
            detail = project_detail(UnitOfWork(engine, read_only=True), project, all_raters=True)
            changes = (
                changes_since(UnitOfWork(engine, read_only=True), detail, period)
                if period is not None
                else None
            )
            if out is not None:
                from auditor.presentation.report import render_report

                html = render_report(detail, changes=changes)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(html, encoding="utf-8")
                typer.echo(f"wrote {out} ({len(html.encode()) // 1024} KiB)")
            if png is not None:
                # Imported only when asked for: matplotlib takes a while to load.
                from auditor.presentation.report_png import write_pngs

                for path in write_pngs(detail, png):
                    typer.echo(f"wrote {path}")
        except OSError as error:
            fail(f"cannot write the report: {error}")
        finally:
            engine.dispose()
