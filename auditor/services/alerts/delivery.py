"""The outbox sender: deliver queued notices at least once, with retries and a dead letter.

``deliver_due`` is one pass: claim due rows with a lease and commit the claim, send each one
outside any transaction, then record the outcome in a short transaction per row:

- ok -> ``sent``;
- retryable (timeouts, 5xx, 429, SMTP 4xx) -> ``attempts + 1`` and the next attempt after an
  exponential backoff with full jitter (``auditor.alerting.backoff``), or ``dead`` after
  ``policy.max_attempts`` attempts;
- permanent (refused target, redirect, 4xx, SMTP 5xx, a broken channel row) -> ``dead``.

Isolation (issue 11): each channel's rows go out on a thread of their own, so channels do
not wait on each other, and every attempt has a total deadline (connect + send + read: the
channel's ``timeout_seconds``, 10 s by default), so a receiver that trickles its answer a
byte at a time costs one deadline, then a retry, never an unbounded stall.

A sender that dies between sending and recording leaves its claim; once the lease has
expired, any sender claims the row again and re-sends the same body with the same event id.
Receivers de-duplicate on the id. Several senders can run at once (workers, the embedded
loop): PostgreSQL hands each row to one of them (SKIP LOCKED), SQLite serialises the claim.

A channel's kind (``auditor.notifiers.kinds``) does the sending: ``deliver`` with the
channel's stored config.
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from auditor.alerting import RetryPolicy, next_attempt_at
from auditor.config import get_settings
from auditor.notifiers import Notification, SendResult
from auditor.notifiers.kinds import kind_named, load_config
from auditor.storage.alert_records import ChannelRecord, OutboxRecord
from auditor.storage.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

DEFAULT_LEASE = timedelta(seconds=60)
DEFAULT_DEADLINE_SECONDS = 10.0  # a channel's timeout_seconds is its attempt's deadline
DEFAULT_BATCH = 50
SEND_GRACE = 0.5  # seconds a send that keeps its own deadline gets to report it

# Sends one notice through one channel within a deadline; never raises (a broken channel is
# a permanent failure). The demo swaps its own in to keep the log channel quiet.
Sender = Callable[[ChannelRecord, Notification, float], SendResult]


def send_by_kind(channel: ChannelRecord, notification: Notification, deadline: float) -> SendResult:
    """Deliver through the channel's kind with its stored config.

    Private targets are allowed only in the networks the operator lists in
    ``AUDITOR_ALLOW_PRIVATE_TARGETS``, read from this process's settings.
    """
    try:
        kind = kind_named(channel.kind)
        config = load_config(channel.kind, channel.config)
    except (KeyError, ValueError, TypeError) as error:
        return SendResult.permanent(f"cannot build the channel: {error!r}")
    allowed = get_settings().private_target_networks

    def send() -> SendResult:
        return kind.deliver(notification, config, deadline, channel=channel.name, allowed=allowed)

    return send_within(send, deadline)


@dataclass(frozen=True)
class Delivery:
    """One attempt: which row, what happened, and the notice itself (the demo prints it)."""

    outbox_id: int
    event_id: str
    channel: str
    status: str  # sent | retry | dead | lost (recorded by another sender)
    attempts: int
    reason: str
    notification: Notification | None


@dataclass
class DeliveryReport:
    deliveries: list[Delivery] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for d in self.deliveries if d.status == status)

    @property
    def sent(self) -> list[Notification]:
        return [d.notification for d in self.deliveries if d.status == "sent" and d.notification]


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def deliver_due(
    uow: UnitOfWork,
    now: datetime | None = None,
    *,
    worker: str | None = None,
    limit: int = DEFAULT_BATCH,
    lease: timedelta = DEFAULT_LEASE,
    policy: RetryPolicy | None = None,
    draw: Callable[[], float] = random.random,
    sender: Sender = send_by_kind,
    after_send: Callable[[OutboxRecord, SendResult], None] | None = None,
) -> DeliveryReport:
    """One pass of the sender over due outbox rows; returns what it did.

    ``now`` is the clock due times and leases are measured on (default: the wall clock).
    ``after_send`` is called between a send and its recording: tests inject a crash there.
    """
    now = now or datetime.now(UTC)
    worker = worker or worker_name()
    policy = policy or RetryPolicy()
    report = DeliveryReport()
    rows = uow.claim_outbox(now, now + lease, worker, limit)
    if not rows:
        return report
    with uow:
        channels = uow.alerts.channels_by_id({r.channel_id for r in rows})
    by_channel: dict[int, list[OutboxRecord]] = {}
    for row in rows:
        by_channel.setdefault(row.channel_id, []).append(row)

    def one_channel(channel_rows: list[OutboxRecord]) -> list[Delivery]:
        # Its own unit of work: channels record their outcomes from their own threads.
        own = uow.another()
        done = []
        for row in channel_rows:
            channel = channels.get(row.channel_id)
            delivery = _deliver_one(own, row, channel, worker, now, policy, draw,
                                    sender, after_send)  # fmt: skip
            done.append(delivery)
        return done

    if len(by_channel) == 1:
        groups = [one_channel(next(iter(by_channel.values())))]
    else:
        # Channels do not wait on each other: one thread per channel. Each attempt is
        # bounded by its channel's deadline, so every thread ends.
        pool = ThreadPoolExecutor(len(by_channel), thread_name_prefix="auditor-deliver")
        futures = [pool.submit(one_channel, channel_rows) for channel_rows in by_channel.values()]
        groups = [future.result() for future in futures]
        pool.shutdown(wait=False)
    for group in groups:
        report.deliveries.extend(group)
    return report


def _deliver_one(
    uow: UnitOfWork,
    row: OutboxRecord,
    channel: ChannelRecord | None,
    worker: str,
    now: datetime,
    policy: RetryPolicy,
    draw: Callable[[], float],
    sender: Sender,
    after_send: Callable[[OutboxRecord, SendResult], None] | None,
) -> Delivery:
    notification: Notification | None = None
    channel_name = "?" if channel is None else channel.name
    try:
        notification = Notification.from_dict(json.loads(row.body))
        if channel is None:
            raise KeyError(f"channel {row.channel_id} is gone")
    except (KeyError, ValueError, TypeError) as error:
        result = SendResult.permanent(f"cannot build the notice or channel: {error!r}")
    else:
        deadline = float(channel.timeout_seconds or DEFAULT_DEADLINE_SECONDS)
        result = sender(channel, notification, deadline)
    if after_send is not None:
        after_send(row, result)
    delivery = _record(uow, row, worker, result, now, policy, draw, notification)
    log.log(
        logging.INFO if result.ok else logging.WARNING,
        "notice %s (%s) via %s: %s %s",
        row.event_id,
        row.kind,
        channel_name,
        result.outcome.value,
        result.reason,
    )
    return replace(delivery, channel=channel_name)


def send_within(send: Callable[[], SendResult], deadline: float) -> SendResult:
    """``send()`` bounded by a total deadline (connect + send + read). The per-operation
    timeouts of a client do not bound a receiver that trickles a byte at a time. The kinds
    that POST keep the deadline themselves (``auditor.notifiers.outbound``: the connection is
    closed when it passes, so the thread ends); they get ``SEND_GRACE`` more to say so. This is
    the backstop for any other send: past the deadline it is abandoned and counts as
    retryable (the receiver de-duplicates on the event id should it still complete)."""
    box: list[SendResult] = []

    def run() -> None:
        try:
            box.append(send())
        except Exception as error:  # a send never raises by contract; keep the row anyway
            box.append(SendResult.permanent(f"unexpected {type(error).__name__}: {error}"))

    thread = threading.Thread(target=run, name="auditor-send", daemon=True)
    thread.start()
    thread.join(deadline + SEND_GRACE)
    if box:
        return box[0]
    return SendResult.retryable(
        f"no complete answer within the {deadline:g} s deadline (connect + send + read)"
    )


def _record(
    uow: UnitOfWork,
    row: OutboxRecord,
    worker: str,
    result: SendResult,
    now: datetime,
    policy: RetryPolicy,
    draw: Callable[[], float],
    notification: Notification | None,
) -> Delivery:
    outbox_id = row.id or 0
    attempts = int(row.attempts) + 1
    with uow:
        if result.ok:
            recorded = uow.alert_log.mark_sent(outbox_id, now, result.reason, result.status_code)
            status = "sent"
        else:
            retry_at = None
            if result.outcome.value == "retryable":
                retry_at = next_attempt_at(attempts, policy, now, draw())
            status = "dead" if retry_at is None else "retry"
            recorded = uow.alert_log.mark_failed(
                outbox_id,
                worker,
                attempts=attempts,
                next_attempt_at=retry_at,
                error=result.reason,
                status_code=result.status_code,
            )
        uow.commit()
    if not recorded:
        status = "lost"  # our lease expired and another sender took the row over
    return Delivery(outbox_id, row.event_id, "", status, attempts, result.reason, notification)
