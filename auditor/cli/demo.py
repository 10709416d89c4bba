"""``auditor demo`` (interim): the embedded default in one command.

Creates or upgrades the database of AUDITOR_DATABASE_URL (a SQLite file by default), creates
the project ``demo`` if needed, imports the bundled sample (60 scans, four radiologists with
repeated presentations in later sessions, one model) and prints a summary. Running it again
imports nothing new: the sample's client keys make the second import all duplicates.
"""

from __future__ import annotations

from pathlib import Path

import typer

from auditor.cli._common import fail
from auditor.cli.imports import run_import, summary
from auditor.config import get_settings
from auditor.services import NotFound
from auditor.services.projects import create_project, show_project
from auditor.storage import migrate
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.csv"
PROJECT = "demo"
CATEGORIES = ["normal", "benign", "malignant"]


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo() -> None:
        """Set up the embedded database, import the bundled sample, print a summary."""
        url = get_settings().database_url
        migrate.upgrade(url)
        engine = make_engine(url)
        try:
            show_project(UnitOfWork(engine, read_only=True), PROJECT)
        except NotFound:
            create_project(UnitOfWork(engine), PROJECT, CATEGORIES, name="Demo: chest scans")
        result = run_import(PROJECT, SAMPLE)
        if result.rejected:
            fail(summary(SAMPLE, result))
        typer.echo(f"database: {url}")
        typer.echo(summary(SAMPLE, result))
        view = show_project(UnitOfWork(engine, read_only=True), PROJECT)
        counts = view.counts or {}
        typer.echo(
            f"project {view.slug}: {counts.get('labels', 0)} labels of "
            f"{counts.get('items', 0)} items by {counts.get('raters', 0)} raters in "
            f"{counts.get('sessions', 0)} sessions; categories {', '.join(view.categories)}"
        )
        engine.dispose()
