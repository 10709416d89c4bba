"""How ``auditor alerts`` reads durations and conditions, and writes times, numbers and one
line per history row (an evaluation, or a notice in the outbox)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from auditor.cli._common import fail
from auditor.services.alerts.reads import HistoryRow
from auditor.storage.alert_records import OutboxRecord

_DURATION = re.compile(r"^(\d+)([smhd]?)$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, option: str) -> timedelta:
    """'90s', '10m', '2h', '7d' or plain seconds."""
    match = _DURATION.match(text.strip())
    if match is None:
        fail(f"{option}: not a duration: {text!r} (e.g. 90s, 10m, 2h, 7d)", 2)
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


def pick_condition(given: dict[str, float | None]) -> tuple[str, float]:
    """The one condition option given (name -> value), or exit 2."""
    chosen = [(name, value) for name, value in given.items() if value is not None]
    if len(chosen) != 1:
        fail(
            "give exactly one condition: --below X, --confidently-below X, "
            "--not-confidently-above X, --above X, --confidently-above X, "
            "--drop D --lookback 7d [--z Z] or --rater-change H",
            2,
        )
    name, value = chosen[0]
    assert value is not None
    return name, value


def short_time(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def human(delta: timedelta | None) -> str:
    if delta is None:
        return "never"
    seconds = int(delta.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def evaluation_line(row: HistoryRow) -> str:
    """When, what changed (RESOLVED, REPEAT, the new state, or - for none), the rule and
    subject, the verdict and the value it rests on, the move, and the notices written."""
    r = row.evaluation
    move = r.from_status + (f" -> {r.to_status}" if r.to_status != r.from_status else "")
    sent = "".join(f" [notice {e}]" for e in r.event_ids)
    held = "".join(f" [held back {e}]" for e in r.suppressed_event_ids)
    return (
        f"{short_time(r.evaluated_at)}  {(row.change or '-').upper():<17} "
        f"{r.rule_id} {r.subject_key} snapshot {r.snapshot_id}: "
        f"{r.verdict} ({r.reason}); {move}{sent}{held}"
    )


def notice_line(r: OutboxRecord) -> str:
    error = f"; {r.last_error}" if r.last_error else ""
    return (
        f"{short_time(r.created_at)}  {r.kind:<8} {r.event_id}  {r.rule_id} "
        f"{r.subject_key} -> {r.channel}: {r.status} after "
        f"{r.attempts} attempt(s){error}"
    )
