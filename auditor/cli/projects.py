"""``auditor project``: create, list and show projects; grow the category vocabulary."""

from __future__ import annotations

import typer

from auditor.cli._common import confirm, fail, unit_of_work
from auditor.cli._settings import setting_option
from auditor.config import get_settings
from auditor.domain import (
    CollapsePolicy,
    IntervalMethod,
    RaterModel,
    RhoMode,
    RhoUnrated,
    Scale,
    Weights,
    windows_problem,
)
from auditor.services.alerts.rules import add_default_alerts
from auditor.services.projects.projects import (
    ProjectView,
    add_categories,
    create_project,
    list_projects,
    remove_category,
    rename_category,
    show_project,
)
from auditor.services.projects.settings import SettingCaps
from auditor.services.recompute.health import FailureRow, failures
from auditor.services.recompute.recompute import find_project_id

_DEFAULTS = "defaults: docs/measures.md"


def _split(text: str) -> list[str]:
    return [part for part in text.split(",") if part.strip()]


def _render(view: ProjectView) -> str:
    s = view.settings
    lines = [
        f"project    {view.slug} ({view.name})",
        f"created    {view.created_at.isoformat(timespec='seconds')}",
        "categories " + ", ".join(f"{i}:{name}" for i, name in enumerate(view.categories)),
        f"collapse   {s.collapse}; rho {s.rho_mode}, unrated raters: {s.rho_unrated}; "
        f"rater model {s.rater_model}",
        f"intervals  {s.interval_method} at {s.interval_level:g}"
        + (f", {s.bootstrap_resamples} resamples" if s.interval_method == "bootstrap" else ""),
        f"windows    {', '.join(f'{d}d' for d in s.windows_days)}; "
        f"recompute every {s.recompute_interval_seconds}s",
        f"scale      {s.scale}"
        + (f", {s.weights} weights (categories in scale order)" if s.scale == "ordinal" else ""),
    ]
    if view.counts is not None:
        lines.append("counts     " + ", ".join(f"{n} {name}" for name, n in view.counts.items()))
    return "\n".join(lines)


def _render_failure(row: FailureRow) -> str:
    state = (
        f"failing, next try after {row.retry_after.isoformat(timespec='seconds')}"
        if row.retry_after is not None and row.consecutive > 0
        else "recovered"
    )
    return (
        f"recompute  {row.failures} failures ({state}); last at "
        f"{row.last_failed_at.isoformat(timespec='seconds')}: {row.last_error}"
    )


def register(app: typer.Typer) -> None:
    project = typer.Typer(help="Projects and their categories.", no_args_is_help=True)
    app.add_typer(project, name="project")

    @project.command("create")
    def create(
        slug: str = typer.Argument(..., help="Short unique name: a-z, 0-9, '-', '_'."),
        categories: str = typer.Option(..., "--categories", "-c", help="Ordered, e.g. a,b,c."),
        name: str | None = typer.Option(None, help="Display name (default: the slug)."),
        collapse: CollapsePolicy = setting_option("collapse", CollapsePolicy.FIRST, _DEFAULTS),
        rho_mode: RhoMode = setting_option("rho_mode", RhoMode.APPROXIMATE),
        rho_unrated: RhoUnrated = setting_option("rho_unrated", RhoUnrated.POOL),
        rater_model: RaterModel = setting_option(
            "rater_model",
            RaterModel.MOMENTS,
            "How x is estimated: moments, or the paper's max_entropy.",
        ),
        interval_method: IntervalMethod = setting_option(
            "interval_method", IntervalMethod.JACKKNIFE
        ),
        interval_level: float = setting_option("interval_level", 0.95),
        bootstrap_resamples: int = setting_option("bootstrap_resamples", 1000),
        windows: str = setting_option("windows_days", "7", "Rolling windows in days, e.g. 7,30."),
        recompute_interval: int = setting_option(
            "recompute_interval_seconds", 60, "Seconds between recomputes."
        ),
        scale: Scale = setting_option(
            "scale",
            Scale.NOMINAL,
            "ordinal: the categories' order (--categories) is the scale's; adds the "
            "weighted coefficients, grade bias and weighted pairwise kappa.",
        ),
        weights: Weights = setting_option(
            "weights", Weights.QUADRATIC, "Agreement weights of an ordinal scale."
        ),
        default_rules: bool = typer.Option(
            True,
            "--default-rules/--no-default-rules",
            help="Install the default alert rules with a log channel (`auditor alerts "
            "defaults --help` lists them); --no-default-rules: no rules.",
        ),
    ) -> None:
        """Create a project with its categories, in order, watched by the default alert
        rules (log channel) unless --no-default-rules."""
        try:
            window_days = tuple(int(part) for part in _split(windows))
        except ValueError:
            fail(f"--windows: expected whole days separated by commas, got {windows!r}", 2)
        problem = windows_problem(window_days)
        if problem is not None:
            fail(f"--windows: {problem}", 2)
        settings = get_settings()
        view = create_project(
            unit_of_work(),
            slug,
            _split(categories),
            SettingCaps(settings.max_bootstrap_resamples, settings.max_windows),
            name=name or slug,
            collapse=collapse,
            rho_mode=rho_mode,
            rho_unrated=rho_unrated,
            rater_model=rater_model,
            interval_method=interval_method,
            interval_level=interval_level,
            bootstrap_resamples=bootstrap_resamples,
            windows_days=window_days,
            recompute_interval_seconds=recompute_interval,
            scale=scale,
            weights=weights,
            then=add_default_alerts if default_rules else None,
        )
        typer.echo(_render(view))
        if default_rules:
            typer.echo(
                "alerts: default rules installed, sending to the 'log' channel; add a webhook "
                f"or e-mail channel with `auditor alerts channel add {view.slug} NAME --kind "
                "webhook --url URL` and give it to rules with `auditor alerts defaults "
                f"{view.slug} --channel NAME`"
            )

    @project.command("list")
    def list_() -> None:
        """One line per project: slug, categories, name."""
        for view in list_projects(unit_of_work(read_only=True)):
            typer.echo(f"{view.slug}\t{','.join(view.categories)}\t{view.name}")

    @project.command("show")
    def show(slug: str) -> None:
        """Settings, categories and row counts of one project."""
        typer.echo(_render(show_project(unit_of_work(read_only=True), slug)))
        uow = unit_of_work(read_only=True)
        for row in failures(uow, find_project_id(uow, slug)):
            typer.echo(_render_failure(row))

    @project.command("add-categories")
    def add(slug: str, names: str = typer.Argument(..., help="e.g. d,e")) -> None:
        """Append categories to the end of a project's vocabulary."""
        vocabulary = add_categories(unit_of_work(), slug, _split(names))
        typer.echo(", ".join(vocabulary))

    @project.command("rename-category")
    def rename(slug: str, old: str, new: str) -> None:
        """Rename a category that no label uses yet."""
        typer.echo(", ".join(rename_category(unit_of_work(), slug, old, new)))

    @project.command("remove-category")
    def remove(slug: str, name: str) -> None:
        """Remove a category that no label uses yet."""
        typer.echo(", ".join(remove_category(unit_of_work(), slug, name)))

    @project.command("delete")
    def delete(
        slug: str,
        yes: bool = typer.Option(False, "--yes", help="Do not ask (needed off a terminal)."),
    ) -> None:
        """Delete a project and everything it owns (labels, imports, snapshots, alerts,
        keys), in one transaction."""
        from auditor.services.ingest.imports import delete_project

        view = show_project(unit_of_work(read_only=True), slug)
        counts = ", ".join(f"{n} {name}" for name, n in (view.counts or {}).items())
        confirm(f"Delete project {slug} and everything it owns ({counts})?", yes)
        deleted = delete_project(unit_of_work(), slug)
        rows = ", ".join(f"{n} {table}" for table, n in sorted(deleted.items()))
        typer.echo(f"project {slug} deleted: {rows}")
