"""The read commands' remote path: the client's answers in the shapes the local path prints
(the same rendering code then writes the same output). Ids are those the service shows a
project key (opaque), which are the ones its API takes back."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from auditor.errors import NotFound
from auditor.services.alerts.reads import HistoryPage, HistoryRow, StateView
from auditor.services.ingest.imports import ImportView
from auditor.services.queries.reverts import RevertMark
from auditor.storage.alert_records import EvaluationRecord, OutboxRecord

if TYPE_CHECKING:
    from auditor.client import Client, HistoryPoint, Notification


def remote_history(
    client: Client,
    metric: str,
    subject: str | None,
    scopes: list[str],
    since: datetime | None,
    until: datetime | None,
) -> tuple[list[HistoryPoint], list[RevertMark], str | None]:
    """Every point (as ``metric_history``), the reverts in the range, and the hint for an
    empty history of a project without any snapshot."""
    with client:
        found = client.history(
            metric, subject=subject or "project", scopes=scopes or None, since=since, until=until
        )
        hint = None
        if not found.points:
            try:
                client.latest_snapshot()
            except NotFound:
                hint = (
                    f"project {client.project_slug!r} at {client.url} has no snapshot yet: the "
                    "service computes one on its timer once it has labels"
                )
    marks = [
        RevertMark(m.reverted_at, m.import_id, m.source, m.labels or 0)
        for m in found.reverts
        if m.reverted_at is not None
    ]
    return list(found.points), marks, hint


def remote_snapshot(client: Client, scope: str, at: datetime | None) -> dict[str, Any]:
    with client:
        found = client.latest_snapshot(scope, at=at)
    return {**found.result, "snapshot": dict(found.meta)}


def remote_imports(client: Client, import_id: int | None = None) -> list[ImportView]:
    with client:
        found = [client.get_import(import_id)] if import_id is not None else client.imports()
    return [ImportView(**vars(record)) for record in found]


def remote_alert_states(client: Client) -> list[StateView]:
    with client:
        return [StateView(**vars(state)) for state in client.alert_states()]


_NOT_STORED = ("subject", "change", "event_ids", "suppressed_event_ids")


def remote_alert_history(
    client: Client,
    rule: str | None,
    subject: str | None,
    state: str | None,
    since: datetime | None,
    every: bool,
    limit: int,
) -> HistoryPage:
    with client:
        found = client.alert_history(
            rule=rule, subject=subject, status=state, since=since, every=every, limit=limit
        )
    rows = []
    for e in found:
        fields = {k: v for k, v in vars(e).items() if k not in _NOT_STORED}
        record = EvaluationRecord(
            project_id=0, subject_key=e.subject, event_ids=list(e.event_ids),
            suppressed_event_ids=list(e.suppressed_event_ids), **fields,
        )  # fmt: skip
        rows.append(HistoryRow(record, e.change))
    return HistoryPage(rows, found.more)


def remote_notices(client: Client, limit: int) -> list[OutboxRecord]:
    with client:
        found = client.notifications(limit=limit)
    return [_outbox(n) for n in found]


def _outbox(n: Notification) -> OutboxRecord:
    return OutboxRecord(
        id=n.id, event_id=n.event_id, channel_id=0, project_id=0, rule_id=n.rule_id,
        subject_key=n.subject, kind=n.kind, sequence=n.sequence, body="", status=n.status,
        attempts=n.attempts, next_attempt_at=n.next_attempt_at, created_at=n.created_at,
        last_error=n.last_error, last_status_code=n.last_status_code, sent_at=n.sent_at,
        channel=n.channel,
    )  # fmt: skip
