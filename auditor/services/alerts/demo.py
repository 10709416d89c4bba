"""What ``auditor demo`` needs from alerting: install rules, and collect what was delivered.

The demo installs a log channel and the ready-made rules on its project, then after each
simulated day drains the outbox through the real sender (claim, send, mark) and prints the
notices it delivered. The log channel of the demo writes to a quiet logger: the demo prints
the notices itself, once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from auditor.alerting import Rule
from auditor.notifiers import LogChannel, Notification, SendResult
from auditor.services.alerts.channels import ChannelSpec, add_channel
from auditor.services.alerts.delivery import deliver_due, send_by_kind
from auditor.services.alerts.rules import RuleSpec, add_rule, install_default_rules
from auditor.storage.alert_records import ChannelRecord
from auditor.storage.unit_of_work import UnitOfWork

DEMO_CHANNEL = "demo-log"
DEMO_LOGGER = "auditor.alerts.demo"

_quiet = logging.getLogger(DEMO_LOGGER)
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False


# Each rater against the group over the last 7 days: every label of a degrading rater moves
# it, where self-agreement moves only through her few hidden repeats (and those pair a new
# label with one from her good weeks), so it separates her from the others more sharply.
# keep_firing_for spans two 6-hour recompute ticks, so one good snapshot does not resolve it.
DEMO_RULE = RuleSpec(
    metric="s_vs_group",
    condition="below",
    threshold=0.7,
    subject="every_rater",
    scope="7d",
    name="rater-vs-group",
    min_n=50,
    keep_firing_for=timedelta(hours=12),
    channels=(DEMO_CHANNEL,),
    repeat_interval=None,  # the demo shows firing and resolved; repeats would crowd it
)


def install_demo_alerts(uow: UnitOfWork, project: str) -> list[Rule]:
    """A log channel, the default rules (``auditor alerts defaults --help``: kappa_S and rho
    lower bound < 0.667 once known, each rater's 7-day self-agreement dropping by more than
    0.15 and 4 standard errors against a week earlier, each rater's change detector), and
    ``DEMO_RULE`` (a rater's 7-day S against the group below 0.7)."""
    add_channel(uow, project, ChannelSpec(name=DEMO_CHANNEL, kind="log"))
    rules = install_default_rules(uow, project, [DEMO_CHANNEL])
    return [*rules, add_rule(uow, project, DEMO_RULE)]


def _demo_send(channel: ChannelRecord, notification: Notification, deadline: float) -> SendResult:
    if channel.kind == "log":
        return LogChannel(channel.name, logger_name=DEMO_LOGGER).send(notification)
    return send_by_kind(channel, notification, deadline)


def drain_notifications(uow: UnitOfWork, now: datetime | None = None) -> list[Notification]:
    """Deliver every due notice now; the ones delivered, oldest first."""
    delivered: list[Notification] = []
    while True:
        report = deliver_due(uow, now, sender=_demo_send)
        delivered.extend(report.sent)
        if not report.deliveries:
            return sorted(delivered, key=lambda n: (n.occurred_at, n.kind != "resolved"))


def describe(notification: Notification) -> str:
    """One line for the demo: when, what, and the number it was judged on."""
    when = notification.occurred_at.strftime("%Y-%m-%d %H:%M")
    value = "undefined" if notification.value is None else f"{notification.value:.3f}"
    # a rater_change rule's value is its CUSUM statistic, not the metric it is about
    what = "rater_change" if notification.condition == "rater_change" else notification.metric
    return (
        f"{when}  {notification.kind.upper():<8} {what} ({notification.scope}) "
        f"{notification.subject} = {value}: {notification.reason}"
        + (f" ({notification.note})" if notification.note else "")
    )
