"""``auditor alerts``: rules, states, history and one sender pass; channels and silences are
in ``_alert_channels`` and ``_alert_silences``. ``register`` wires every command.

Shell only: parse, call one service function of ``auditor.services.alerts``, render.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from auditor.alerting.defaults import defaults_help
from auditor.cli._alert_channels import (
    channel_add,
    channel_list,
    channel_remove,
    channel_update,
)
from auditor.cli._alert_format import (
    evaluation_line,
    human,
    notice_line,
    number,
    parse_duration,
    pick_condition,
    short_time,
)
from auditor.cli._alert_silences import silence, silences, unsilence
from auditor.cli._common import parse_time, unit_of_work
from auditor.cli._remote import remote_client
from auditor.cli._remote_reads import (
    remote_alert_history,
    remote_alert_states,
    remote_notices,
)
from auditor.notifiers.kinds import KINDS
from auditor.services.alerts.delivery import deliver_due
from auditor.services.alerts.reads import (
    STATES,
    HistoryFilter,
    alert_history,
    alert_status,
    notification_history,
)
from auditor.services.alerts.rules import (
    RuleSpec,
    add_rule,
    install_default_rules,
    list_rules,
    remove_rule,
    set_rule_enabled,
)
from auditor.stats.catalogue import alert_metric_help, worse_when_higher

PROJECT = typer.Argument(..., help="Project slug.")


def add(
    project: str = PROJECT,
    metric: str = typer.Option(..., "--metric", help=alert_metric_help()),
    subject: str = typer.Option(
        "project", "--subject", help="project, every_rater, rater:ID or model:ID."
    ),
    scope: str = typer.Option("cumulative", "--scope", help="cumulative or e.g. 7d."),
    below: float | None = typer.Option(None, "--below", help="value < X"),
    confidently_below: float | None = typer.Option(
        None, "--confidently-below", help="interval upper bound < X"
    ),
    not_confidently_above: float | None = typer.Option(
        None, "--not-confidently-above", help="interval lower bound < X (Krippendorff)"
    ),
    above: float | None = typer.Option(
        None,
        "--above",
        help=f"value > X (metrics where higher is worse: {', '.join(worse_when_higher())})",
    ),
    confidently_above: float | None = typer.Option(
        None, "--confidently-above", help="interval lower bound > X"
    ),
    drop: float | None = typer.Option(None, "--drop", help="fell by more than D ..."),
    lookback: str | None = typer.Option(None, "--lookback", help="... against e.g. 7d ago"),
    z: float | None = typer.Option(
        None, "--z", help="... and by more than Z standard errors (both sides' n)"
    ),
    rater_change: float | None = typer.Option(
        None,
        "--rater-change",
        help="each rater's change detector (Bernoulli CUSUM) reaches limit h (docs/alerts.md)",
    ),
    margin: float | None = typer.Option(
        None,
        "--margin",
        help="interval bounds: a wider interval holding X is insufficient data (not yet known)",
    ),
    name: str | None = typer.Option(None, "--name", help="Rule name (id: PROJECT:NAME)."),
    min_n: int = typer.Option(10, "--min-n", help="Fewer items: insufficient data."),
    for_: str = typer.Option("0", "--for", help="Hold this long before firing."),
    keep_firing_for: str = typer.Option("0", "--keep-firing-for"),
    severity: str = typer.Option("warning", "--severity", help="info, warning, critical."),
    channels: list[str] = typer.Option([], "--channel", help="Channel name; repeat."),
    repeat_interval: str = typer.Option(
        "24h", "--repeat-interval", help="Re-notify while firing; 'never' to stop."
    ),
) -> None:
    """Add a rule to a project."""
    kind, value = pick_condition(
        {
            "below": below,
            "confidently_below": confidently_below,
            "not_confidently_above": not_confidently_above,
            "drop": drop,
            "above": above,
            "confidently_above": confidently_above,
            "rater_change": rater_change,
        }
    )
    spec = RuleSpec(
        metric=metric,
        condition=kind,
        threshold=None if kind == "drop" else value,
        drop=value if kind == "drop" else None,
        lookback=None if lookback is None else parse_duration(lookback, "--lookback"),
        subject=subject,
        scope=scope,
        name=name,
        min_n=min_n,
        for_=parse_duration(for_, "--for"),
        keep_firing_for=parse_duration(keep_firing_for, "--keep-firing-for"),
        severity=severity,
        channels=tuple(channels),
        repeat_interval=None
        if repeat_interval == "never"
        else parse_duration(repeat_interval, "--repeat-interval"),
        margin=margin,
        z=z,
    )
    rule = add_rule(unit_of_work(), project, spec)
    typer.echo(f"added rule {rule.id}")


def defaults(
    project: str = PROJECT,
    channels: list[str] = typer.Option([], "--channel", help="Channel name; repeat."),
) -> None:
    # the help is defaults_help(), given where the command is registered
    added = install_default_rules(unit_of_work(), project, channels)
    typer.echo("\n".join(f"added rule {r.id}" for r in added) or "defaults already present")


def list_(project: str = PROJECT) -> None:
    """The project's rules."""
    rules = list_rules(unit_of_work(read_only=True), project)
    for r in rules:
        c = r.condition
        if c.kind.value == "drop":
            what = f"drop > {c.drop:g} vs {human(c.lookback)} ago"
            what += f" and z > {c.z:g}" if c.z is not None else ""
        else:
            what = f"{c.kind.value} {c.threshold:g}"
            what += f" (margin {c.margin:g})" if c.margin is not None else ""
        subject = r.subject.kind.value + (f":{r.subject.ref}" if r.subject.ref else "")
        typer.echo(
            f"{r.id}  {r.metric} {subject} {r.scope}: {what}; min_n {r.min_n}, "
            f"for {human(r.for_)}, keep {human(r.keep_firing_for)}, {r.severity.value}, "
            f"repeat {human(r.repeat_interval)}, channels {','.join(r.channels) or '-'}"
            + ("" if r.enabled else "  [disabled]")
        )
    if not rules:
        typer.echo(f"no rules in {project} (try: auditor alerts defaults {project})")


def remove(
    project: str = PROJECT, rule: str = typer.Argument(..., help="Rule id or name.")
) -> None:
    """Remove a rule and its states (the log and sent notices stay)."""
    typer.echo(f"removed rule {remove_rule(unit_of_work(), project, rule)}")


def enable(project: str, rule: str) -> None:
    """Enable a rule."""
    typer.echo(f"enabled {set_rule_enabled(unit_of_work(), project, rule, True)}")


def disable(project: str, rule: str) -> None:
    """Disable a rule (it is no longer evaluated; its state stays)."""
    typer.echo(f"disabled {set_rule_enabled(unit_of_work(), project, rule, False)}")


def status(project: str = PROJECT) -> None:
    """Every (rule, subject) state: ok, pending, firing or insufficient_data."""
    client = remote_client(project)
    if client is not None:
        states = remote_alert_states(client)
    else:
        states = alert_status(unit_of_work(read_only=True), project)
    typer.echo(f"{'rule':<36} {'subject':<16} {'status':<18} {'since':<19} {'value':>8}  reason")
    for s in states:
        typer.echo(
            f"{s.rule_id:<36} {s.subject:<16} {s.status:<18} {short_time(s.since):<19} "
            f"{number(s.value):>8}  {s.reason or ''}"
        )


def history(
    project: str = PROJECT,
    rule: str | None = typer.Option(None, "--rule", help="Only this rule (id or name)."),
    subject: str | None = typer.Option(
        None, "--subject", help="Only this subject: project, rater:ID or model:ID."
    ),
    state: str | None = typer.Option(
        None, "--state", help=f"Only moves to this state: {', '.join(STATES)}."
    ),
    since: str | None = typer.Option(None, "--since", help="ISO 8601, inclusive."),
    every: bool = typer.Option(
        False, "--all", help="Every evaluation, not only transitions and repeats."
    ),
    limit: int = typer.Option(
        200, "--limit", min=1, max=10_000, help="At most this many lines, newest first."
    ),
    notices: bool = typer.Option(False, "--notices", help="Show notices and delivery."),
) -> None:
    """What happened, newest first: transitions (pending, firing, repeat, resolved,
    insufficient_data, ok) by default, every evaluation with --all, or with --notices
    the outbox and its delivery."""
    more = 0
    lines: list[str] = []
    client = remote_client(project)
    if notices:
        rows = (
            remote_notices(client, limit)
            if client is not None
            else notification_history(unit_of_work(read_only=True), project, limit=limit)
        )
        lines = [notice_line(r) for r in rows]
    else:
        where = HistoryFilter(
            rule=rule,
            subject=subject,
            since=None if since is None else parse_time(since, "--since"),
            state=state,
            every_evaluation=every,
            limit=limit,
        )
        page = (
            remote_alert_history(client, rule, subject, state, where.since, every, limit)
            if client is not None
            else alert_history(unit_of_work(read_only=True), project, where)
        )
        lines, more = [evaluation_line(r) for r in page.rows], page.more
    if not lines and not notices:
        hint = "" if every else " (--all lists every evaluation)"
        typer.echo(f"no {'evaluation' if every else 'transition'} matches{hint}", err=True)
    for line in lines:
        typer.echo(line)
    if more:
        # After the list, on stderr like the empty-list hint: scripts parse stdout lines.
        typer.echo(f"{more} more; use --limit or --since/--state filters", err=True)


def deliver() -> None:
    """One pass of the notification sender (workers and `auditor run` do this on a timer)."""
    report = deliver_due(unit_of_work())
    for d in report.deliveries:
        typer.echo(f"{d.event_id} via {d.channel}: {d.status} ({d.reason})")
    typer.echo(f"{len(report.deliveries)} notice(s) handled")


def register(app: typer.Typer) -> None:
    alerts = typer.Typer(help="Alert rules, channels, silences and states.", no_args_is_help=True)
    commands: tuple[tuple[str, Callable[..., None]], ...] = (
        ("add", add),
        ("defaults", defaults),
        ("list", list_),
        ("remove", remove),
        ("enable", enable),
        ("disable", disable),
        ("status", status),
        ("history", history),
        ("silence", silence),
        ("silences", silences),
        ("unsilence", unsilence),
        ("deliver", deliver),
    )
    for name, command in commands:
        help_text = defaults_help() if command is defaults else None
        alerts.command(name, help=help_text)(command)
    channel = typer.Typer(
        help=f"Where notices go; kinds: {', '.join(KINDS)}.", no_args_is_help=True
    )
    for name, command in (
        ("add", channel_add),
        ("list", channel_list),
        ("update", channel_update),
        ("remove", channel_remove),
    ):
        channel.command(name)(command)
    alerts.add_typer(channel, name="channel")
    app.add_typer(alerts, name="alerts")
