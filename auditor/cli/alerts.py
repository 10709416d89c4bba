"""``auditor alerts``: rules, channels, silences, states, history, and one sender pass.

Shell only: parse, call one service function of ``auditor.services.alert_admin`` (or the
sender), render. Importing this module also registers alert evaluation with the recompute
(``auditor.services.alerts``), so every CLI recompute evaluates rules.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import typer

from auditor.cli._alert_lines import evaluation_line, notice_line
from auditor.cli._common import fail, parse_time, unit_of_work
from auditor.services import ServiceError
from auditor.services import alerts as _evaluation  # noqa: F401  (registers the hook)
from auditor.services.alert_admin import (
    ChannelSpec,
    RuleSpec,
    add_channel,
    add_rule,
    add_silence,
    alert_status,
    end_silence,
    install_default_rules,
    list_channels,
    list_rules,
    list_silences,
    notification_history,
    remove_channel,
    remove_rule,
    set_rule_enabled,
)
from auditor.services.alert_delivery import deliver_due
from auditor.services.alert_history import STATES, HistoryFilter, alert_history

_DURATION = re.compile(r"^(\d+)([smhd]?)$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, option: str) -> timedelta:
    """'90s', '10m', '2h', '7d' or plain seconds."""
    match = _DURATION.match(text.strip())
    if match is None:
        fail(f"{option}: not a duration: {text!r} (e.g. 90s, 10m, 2h, 7d)", 2)
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


def _short(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _human(delta: timedelta | None) -> str:
    if delta is None:
        return "never"
    seconds = int(delta.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _condition(
    below: float | None,
    confidently_below: float | None,
    not_confidently_above: float | None,
    drop: float | None,
    above: float | None = None,
    confidently_above: float | None = None,
) -> tuple[str, float | None]:
    given = [
        (name, value)
        for name, value in (
            ("below", below),
            ("confidently_below", confidently_below),
            ("not_confidently_above", not_confidently_above),
            ("drop", drop),
            ("above", above),
            ("confidently_above", confidently_above),
        )
        if value is not None
    ]
    if len(given) != 1:
        fail(
            "give exactly one condition: --below X, --confidently-below X, "
            "--not-confidently-above X, --above X, --confidently-above X "
            "or --drop D --lookback 7d",
            2,
        )
    return given[0]


def register(app: typer.Typer) -> None:
    alerts = typer.Typer(help="Alert rules, channels, silences and states.", no_args_is_help=True)
    channel = typer.Typer(help="Where notices go: webhook, email, log.", no_args_is_help=True)
    alerts.add_typer(channel, name="channel")
    app.add_typer(alerts, name="alerts")

    @alerts.command("add")
    def add(
        project: str = typer.Argument(..., help="Project slug."),
        metric: str = typer.Option(..., "--metric", help="kappa_s, rho, self_agreement, ..."),
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
            None, "--above", help="value > X (metrics where higher is worse: random_choice)"
        ),
        confidently_above: float | None = typer.Option(
            None, "--confidently-above", help="interval lower bound > X"
        ),
        drop: float | None = typer.Option(None, "--drop", help="fell by more than D ..."),
        lookback: str | None = typer.Option(None, "--lookback", help="... against e.g. 7d ago"),
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
        kind, value = _condition(
            below, confidently_below, not_confidently_above, drop, above, confidently_above
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
        )
        try:
            rule = add_rule(unit_of_work(), project, spec)
        except ServiceError as error:
            fail(str(error))
        typer.echo(f"added rule {rule.id}")

    @alerts.command("defaults")
    def defaults(
        project: str = typer.Argument(..., help="Project slug."),
        channels: list[str] = typer.Option([], "--channel", help="Channel name; repeat."),
    ) -> None:
        """Install the ready-made rules (kappa_S and rho lower bound < 0.667; SA drop > 0.15)."""
        try:
            added = install_default_rules(unit_of_work(), project, channels)
        except ServiceError as error:
            fail(str(error))
        typer.echo("\n".join(f"added rule {r.id}" for r in added) or "defaults already present")

    @alerts.command("list")
    def list_(project: str = typer.Argument(..., help="Project slug.")) -> None:
        """The project's rules."""
        try:
            rules = list_rules(unit_of_work(read_only=True), project)
        except ServiceError as error:
            fail(str(error))
        for r in rules:
            c = r.condition
            if c.kind.value == "drop":
                what = f"drop > {c.drop:g} vs {_human(c.lookback)} ago"
            else:
                what = f"{c.kind.value} {c.threshold:g}"
            subject = r.subject.kind.value + (f":{r.subject.ref}" if r.subject.ref else "")
            typer.echo(
                f"{r.id}  {r.metric} {subject} {r.scope}: {what}; min_n {r.min_n}, "
                f"for {_human(r.for_)}, keep {_human(r.keep_firing_for)}, {r.severity.value}, "
                f"repeat {_human(r.repeat_interval)}, channels {','.join(r.channels) or '-'}"
                + ("" if r.enabled else "  [disabled]")
            )
        if not rules:
            typer.echo(f"no rules in {project} (try: auditor alerts defaults {project})")

    @alerts.command("remove")
    def remove(
        project: str = typer.Argument(..., help="Project slug."),
        rule: str = typer.Argument(..., help="Rule id or name."),
    ) -> None:
        """Remove a rule and its states (the log and sent notices stay)."""
        try:
            typer.echo(f"removed rule {remove_rule(unit_of_work(), project, rule)}")
        except ServiceError as error:
            fail(str(error))

    @alerts.command("enable")
    def enable(project: str, rule: str) -> None:
        """Enable a rule."""
        try:
            typer.echo(f"enabled {set_rule_enabled(unit_of_work(), project, rule, True)}")
        except ServiceError as error:
            fail(str(error))

    @alerts.command("disable")
    def disable(project: str, rule: str) -> None:
        """Disable a rule (it is no longer evaluated; its state stays)."""
        try:
            typer.echo(f"disabled {set_rule_enabled(unit_of_work(), project, rule, False)}")
        except ServiceError as error:
            fail(str(error))

    @alerts.command("status")
    def status(project: str = typer.Argument(..., help="Project slug.")) -> None:
        """Every (rule, subject) state: ok, pending, firing or insufficient_data."""
        try:
            states = alert_status(unit_of_work(read_only=True), project)
        except ServiceError as error:
            fail(str(error))
        typer.echo(
            f"{'rule':<36} {'subject':<16} {'status':<18} {'since':<19} {'value':>8}  reason"
        )
        for s in states:
            typer.echo(
                f"{s.rule_id:<36} {s.subject:<16} {s.status:<18} {_short(s.since):<19} "
                f"{_number(s.value):>8}  {s.reason or ''}"
            )

    @alerts.command("history")
    def history(
        project: str = typer.Argument(..., help="Project slug."),
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
        try:
            if notices:
                rows = notification_history(unit_of_work(read_only=True), project, limit=limit)
            else:
                where = HistoryFilter(
                    rule=rule,
                    subject=subject,
                    since=None if since is None else parse_time(since, "--since"),
                    state=state,
                    every_evaluation=every,
                    limit=limit,
                )
                page = alert_history(unit_of_work(read_only=True), project, where)
                rows, more = page.rows, page.more
        except ServiceError as error:
            fail(str(error))
        if not rows and not notices:
            hint = "" if every else " (--all lists every evaluation)"
            typer.echo(f"no {'evaluation' if every else 'transition'} matches{hint}", err=True)
        for r in rows:
            typer.echo(notice_line(r) if notices else evaluation_line(r))
        if more:
            # After the list, on stderr like the empty-list hint: scripts parse stdout lines.
            typer.echo(f"{more} more; use --limit or --since/--state filters", err=True)

    @alerts.command("silence")
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
            ends = (
                parse_time(until, "--until") if until else now + parse_duration(for_ or "", "--for")
            )
        except OverflowError:
            fail(f"--for {for_}: too long (silences end before 2100-01-01)", 2)
        try:
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
        except ServiceError as error:
            fail(str(error))
        typer.echo(f"silence {view.id} until {_short(view.ends_at)}")

    @alerts.command("silences")
    def silences(
        project: str = typer.Argument(..., help="Project slug."),
        all_: bool = typer.Option(False, "--all", help="Include ended silences."),
    ) -> None:
        """Active (or all) silences."""
        try:
            views = list_silences(unit_of_work(read_only=True), project, include_ended=all_)
        except ServiceError as error:
            fail(str(error))
        for v in views:
            typer.echo(
                f"{v.id:>4}  {_short(v.starts_at)} .. {_short(v.ends_at)}  rule {v.rule_id or '*'} "
                f"subject {v.subject or '*'}  {v.reason}"
            )

    @alerts.command("unsilence")
    def unsilence(project: str, silence_id: int) -> None:
        """End a silence now."""
        try:
            end_silence(unit_of_work(), project, silence_id)
        except ServiceError as error:
            fail(str(error))
        typer.echo(f"silence {silence_id} ended")

    @alerts.command("deliver")
    def deliver() -> None:
        """One pass of the notification sender (workers and `auditor run` do this on a timer)."""
        report = deliver_due(unit_of_work())
        for d in report.deliveries:
            typer.echo(f"{d.event_id} via {d.channel}: {d.status} ({d.reason})")
        typer.echo(f"{len(report.deliveries)} notice(s) handled")

    @channel.command("add")
    def channel_add(
        project: str = typer.Argument(..., help="Project slug."),
        name: str = typer.Argument(..., help="Channel name."),
        kind: str = typer.Option(..., "--kind", help="webhook, email or log."),
        url: str | None = typer.Option(None, "--url", help="Webhook URL."),
        secret: str | None = typer.Option(None, "--secret", help="Default: generated."),
        host: str | None = typer.Option(None, "--smtp-host"),
        port: int = typer.Option(25, "--smtp-port"),
        sender: str | None = typer.Option(None, "--from"),
        to: list[str] = typer.Option([], "--to", help="Recipient; repeat."),
        starttls: bool = typer.Option(False, "--starttls"),
        username: str | None = typer.Option(None, "--username"),
        password: str | None = typer.Option(None, "--password"),
        timeout: float = typer.Option(10.0, "--timeout"),
    ) -> None:
        """Add a channel. A webhook's signing secret is printed once."""
        spec = ChannelSpec(
            name=name,
            kind=kind,
            url=url,
            secret=secret,
            email_host=host,
            email_port=port if kind == "email" else None,
            email_from=sender,
            email_to=tuple(to),
            starttls=starttls,
            username=username,
            password=password,
            timeout_seconds=timeout,
        )
        try:
            view, made_secret = add_channel(unit_of_work(), project, spec)
        except ServiceError as error:
            fail(str(error))
        typer.echo(f"added {view.kind} channel {view.name}")
        if made_secret and not secret:
            typer.echo(f"signing secret (shown once): {made_secret}")

    @channel.command("list")
    def channel_list(project: str = typer.Argument(..., help="Project slug.")) -> None:
        """The project's channels (secrets are never shown)."""
        try:
            views = list_channels(unit_of_work(read_only=True), project)
        except ServiceError as error:
            fail(str(error))
        for v in views:
            target = v.url or (f"{v.email_host}:{v.email_port} to {','.join(v.email_to)}")
            target = "" if v.kind == "log" else target
            typer.echo(f"{v.name:<16} {v.kind:<8} {target}")

    @channel.command("remove")
    def channel_remove(project: str, name: str) -> None:
        """Remove a channel no rule uses."""
        try:
            remove_channel(unit_of_work(), project, name)
        except ServiceError as error:
            fail(str(error))
        typer.echo(f"removed channel {name}")
