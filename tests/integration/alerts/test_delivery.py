"""The outbox sender against real receivers on loopback, on SQLite and PostgreSQL: retries
with backoff, a crash between send and mark, dead letters, several senders, SSRF at save."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy

import pytest

from auditor.alerting import RetryPolicy
from auditor.config import get_settings
from auditor.errors import Invalid
from auditor.notifiers import HEADER_EVENT_ID, verify
from auditor.services.alerts.channels import ChannelSpec, add_channel, list_channels
from auditor.services.alerts.delivery import deliver_due
from auditor.services.alerts.reads import notification_history
from auditor.storage.alert_log_repository import claim_due
from auditor.storage.alert_records import OutboxRecord
from tests.integration.alerts.support import T0, evaluations, ingest, kappa_rule, labels, recompute

HOUR = timedelta(hours=1)
SECRET = "s" * 32


@pytest.fixture(autouse=True)
def _operator_allows_loopback(monkeypatch):
    """The receivers here listen on loopback: the operator allows it for the deployment."""
    monkeypatch.setenv("AUDITOR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("AUDITOR_ALLOW_PRIVATE_TARGETS")
    get_settings.cache_clear()


def _fire(uow, project, channel: str) -> str:
    """Make rule 'kappa' fire once through ``channel``; the firing notice's event id."""
    kappa_rule(uow, channels=(channel,))
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    recompute(uow, project, T0 + 2 * HOUR)
    (row,) = notification_history(uow, "p")
    return row.event_id


def _webhook(uow, url: str) -> None:
    spec = ChannelSpec(name="hook", kind="webhook", config={"url": url, "secret": SECRET})
    add_channel(uow, "p", spec)


def _outbox(uow) -> OutboxRecord:
    (row,) = notification_history(uow, "p")
    return row


def test_receiver_failing_three_times_gets_exactly_one_event_id(uow, project, receiver):
    receiver.script = [500, 503, 429, 200]
    _webhook(uow, receiver.url)
    event_id = _fire(uow, project, "hook")
    policy = RetryPolicy(base=timedelta(seconds=5), cap=timedelta(minutes=5), max_attempts=10)
    now = datetime.now(UTC)
    statuses = []
    for _ in range(6):
        report = deliver_due(uow, now, policy=policy, draw=lambda: 0.5)
        statuses += [d.status for d in report.deliveries]
        now += timedelta(minutes=10)  # past any backoff of this policy
    assert statuses == ["retry", "retry", "retry", "sent"]
    assert [r.headers[HEADER_EVENT_ID] for r in receiver.received] == [event_id] * 4
    bodies = {r.body for r in receiver.received}
    assert len(bodies) == 1  # byte-identical retries
    assert json.loads(bodies.pop())["event_id"] == event_id
    for r in receiver.received:
        headers = {k.lower(): v for k, v in r.headers.items()}
        assert verify(
            SECRET,
            headers["x-auditor-event-id"],
            headers["x-auditor-timestamp"],
            r.body,
            headers["x-auditor-signature"],
            time.time(),
        )
    row = _outbox(uow)
    assert row.status == "sent" and row.attempts == 4


def test_backoff_waits_before_the_next_attempt(uow, project, receiver):
    receiver.script = [500, 200]
    _webhook(uow, receiver.url)
    _fire(uow, project, "hook")
    now = datetime.now(UTC)
    policy = RetryPolicy(base=timedelta(seconds=60), cap=timedelta(hours=1))
    assert deliver_due(uow, now, policy=policy, draw=lambda: 0.5).count("retry") == 1
    row = _outbox(uow)
    assert row.next_attempt_at == now + timedelta(seconds=30)  # 0.5 * base
    assert deliver_due(uow, now + timedelta(seconds=29), policy=policy).deliveries == []
    assert deliver_due(uow, now + timedelta(seconds=30), policy=policy).count("sent") == 1


def test_sender_killed_between_send_and_mark_resends_the_same_event(uow, project, receiver):
    _webhook(uow, receiver.url)
    event_id = _fire(uow, project, "hook")
    now = datetime.now(UTC)
    lease = timedelta(seconds=60)

    def crash(row, result):
        raise SystemExit("injected: the sender dies after sending, before marking")

    with pytest.raises(SystemExit):
        deliver_due(uow, now, lease=lease, after_send=crash)
    assert len(receiver.received) == 1
    row = _outbox(uow)
    assert row.status == "pending" and row.claimed_by is not None
    # The claim holds until its lease ends: nobody re-sends in the meantime.
    assert deliver_due(uow, now + timedelta(seconds=59), lease=lease).deliveries == []
    report = deliver_due(uow, now + timedelta(seconds=61), lease=lease)
    assert [d.status for d in report.deliveries] == ["sent"]
    assert [r.headers[HEADER_EVENT_ID] for r in receiver.received] == [event_id, event_id]
    assert receiver.received[0].body == receiver.received[1].body
    assert _outbox(uow).status == "sent"


def test_dead_letter_after_max_attempts(uow, project, receiver):
    receiver.script = [503]
    _webhook(uow, receiver.url)
    _fire(uow, project, "hook")
    policy = RetryPolicy(base=timedelta(seconds=1), cap=timedelta(seconds=1), max_attempts=3)
    now = datetime.now(UTC)
    statuses = []
    for _ in range(5):
        statuses += [d.status for d in deliver_due(uow, now, policy=policy).deliveries]
        now += timedelta(seconds=5)
    assert statuses == ["retry", "retry", "dead"]
    row = _outbox(uow)
    assert row.status == "dead" and row.attempts == 3 and "503" in row.last_error
    assert len(receiver.received) == 3


def test_permanent_failure_is_dead_at_once(uow, project, receiver):
    receiver.script = [(302, {"Location": "http://127.0.0.1:6379/"})]
    _webhook(uow, receiver.url)
    _fire(uow, project, "hook")
    report = deliver_due(uow, datetime.now(UTC))
    assert [d.status for d in report.deliveries] == ["dead"]
    assert "redirect" in _outbox(uow).last_error


def test_two_senders_never_claim_the_same_row(uow, engine, project):
    add_channel(uow, "p", ChannelSpec(name="log", kind="log"))
    _fire(uow, project, "log")
    # 40 more pending rows, due now, so that two claimers race for them.
    (first,) = notification_history(uow, "p")
    now = datetime.now(UTC)
    with uow:
        rows = [
            OutboxRecord(
                id=None,
                event_id=f"{i:032x}",
                channel_id=first.channel_id,
                project_id=first.project_id,
                rule_id=first.rule_id,
                subject_key=first.subject_key,
                kind="firing",
                sequence=0,
                body="{}",
                status="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
            for i in range(40)
        ]
        uow.alert_log.insert_outbox(rows)
        uow.commit()
    claimed: dict[str, list[int]] = {}
    barrier = threading.Barrier(2)

    def claim(name: str) -> None:
        barrier.wait()
        got = []
        for _ in range(6):
            got += [r.id for r in claim_due(engine, now, now + HOUR, name, 5)]
        claimed[name] = got

    threads = [threading.Thread(target=claim, args=(n,)) for n in ("one", "two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not set(claimed["one"]) & set(claimed["two"])
    assert len(claimed["one"]) + len(claimed["two"]) == 41


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]/",
        "http://2130706433/",
        "http://10.0.0.1/hook",
    ],
)
def test_channel_save_refuses_ssrf_targets(uow, project, url):
    with pytest.raises(Invalid, match="refused"):  # the operator allows nothing private
        add_channel(
            uow, "p", ChannelSpec(name="bad", kind="webhook", config={"url": url}), allowed=()
        )
    assert list_channels(uow, "p") == []


def test_an_allowed_network_may_be_targeted_and_secret_is_generated(uow, project):
    spec = ChannelSpec(name="inside", kind="webhook", config={"url": "http://127.0.0.1:9/"})
    view, secret = add_channel(uow, "p", spec)  # allowed by the operator's setting
    assert view.settings == {"url": "http://127.0.0.1:9/"}  # the secret is not shown
    assert secret is not None and len(secret) >= 32
    assert "secret" not in repr(view)


def test_email_through_the_outbox_arrives_at_a_real_smtp_server(uow, project, smtp_server):
    inbox, port = smtp_server
    spec = ChannelSpec(
        name="mail",
        kind="email",
        config={
            "email_host": "127.0.0.1",
            "email_port": port,
            "email_from": "auditor@example.org",
            "email_to": ["ops@example.org"],
        },
        timeout_seconds=5.0,
    )
    add_channel(uow, "p", spec)
    event_id = _fire(uow, project, "mail")
    report = deliver_due(uow, datetime.now(UTC))
    assert [d.status for d in report.deliveries] == ["sent"]
    [envelope] = inbox.envelopes
    assert envelope.rcpt_tos == ["ops@example.org"]
    message = message_from_bytes(envelope.original_content, policy=policy.default)
    assert message[HEADER_EVENT_ID] == event_id
    assert message["Subject"].startswith("[FIRING] warning: kappa_s (cumulative) for project in p")
    assert _outbox(uow).status == "sent"


def test_embedded_cycle_evaluates_and_delivers(uow, project, receiver):
    from auditor.services.recompute.embedded import run_cycle

    _webhook(uow, receiver.url)
    kappa_rule(uow, channels=("hook",))
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    run_cycle(uow, lambda: T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    run_cycle(uow, lambda: T0 + 2 * HOUR)  # fires, and the cycle sends the notice
    row = _outbox(uow)
    assert row.status == "sent" and row.kind == "firing"
    assert [r.headers[HEADER_EVENT_ID] for r in receiver.received] == [row.event_id]


KILLED_SENDER = """
import os, signal, sys
from datetime import datetime
from auditor.services.alerts.delivery import deliver_due
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork

def die(row, result):
    assert result.ok, result.reason
    os.kill(os.getpid(), signal.SIGKILL)  # sent, not yet marked

deliver_due(UnitOfWork(make_engine(sys.argv[1])), datetime.fromisoformat(sys.argv[2]),
            worker="doomed", after_send=die)
"""


def test_sender_process_sigkilled_after_sending_is_resent_by_a_fresh_sender(
    uow, project, receiver, database_url
):
    _webhook(uow, receiver.url)
    event_id = _fire(uow, project, "hook")
    now = datetime.now(UTC)
    process = subprocess.run(
        [sys.executable, "-c", KILLED_SENDER, database_url, now.isoformat()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr
    assert len(receiver.received) == 1
    row = _outbox(uow)
    assert row.status == "pending" and row.claimed_by == "doomed"
    assert deliver_due(uow, now + timedelta(seconds=30)).deliveries == []  # lease holds
    report = deliver_due(uow, now + timedelta(seconds=61))  # the lease (60 s) has expired
    assert [d.status for d in report.deliveries] == ["sent"]
    assert [r.headers[HEADER_EVENT_ID] for r in receiver.received] == [event_id, event_id]
    assert receiver.received[0].body == receiver.received[1].body


def test_the_receiver_gets_the_opaque_snapshot_id_the_projects_keys_see(uow, project, receiver):
    from auditor.services.access.public_ids import load_public_ids

    _webhook(uow, receiver.url)
    _fire(uow, project, "hook")
    deliver_due(uow, datetime.now(UTC))
    (delivered,) = receiver.received
    shown = json.loads(delivered.body)["snapshot_id"]
    (firing,) = [e for e in evaluations(uow, "p") if e.event_ids]
    assert shown == load_public_ids(uow).encode("snapshot", project, firing.snapshot_id)
    assert shown != firing.snapshot_id
