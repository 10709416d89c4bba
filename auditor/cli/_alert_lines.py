"""One line per row of ``auditor alerts history``: an evaluation, or a notice in the outbox."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def short_time(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def evaluation_line(r: dict[str, Any]) -> str:
    """When, what changed (RESOLVED, REPEAT, the new state, or - for none), the rule and
    subject, the verdict and the value it rests on, the move, and the notices written."""
    move = r["from_status"] + (
        f" -> {r['to_status']}" if r["to_status"] != r["from_status"] else ""
    )
    sent = "".join(f" [notice {e}]" for e in r["event_ids"])
    held = "".join(f" [held back {e}]" for e in r["suppressed_event_ids"])
    return (
        f"{short_time(r['evaluated_at'])}  {(r.get('change') or '-').upper():<17} "
        f"{r['rule_id']} {r['subject_key']} snapshot {r['snapshot_id']}: "
        f"{r['verdict']} ({r['reason']}); {move}{sent}{held}"
    )


def notice_line(r: dict[str, Any]) -> str:
    error = f"; {r['last_error']}" if r["last_error"] else ""
    return (
        f"{short_time(r['created_at'])}  {r['kind']:<8} {r['event_id']}  {r['rule_id']} "
        f"{r['subject_key']} -> {r['channel']}: {r['status']} after "
        f"{r['attempts']} attempt(s){error}"
    )
