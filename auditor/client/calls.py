"""Every method of the client, as a plan (``auditor.client.exchange``): which requests, in
which order, and what the answers become. ``Client`` and ``AsyncClient`` run the same plans."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from auditor.client import posting
from auditor.client.alert_records import AlertHistory, AlertState, Evaluation, Notification
from auditor.client.errors import RemoteFailure
from auditor.client.exchange import Call, Pause, Plan
from auditor.client.records import (
    History,
    HistoryPoint,
    Import,
    KeyInfo,
    PostResult,
    Project,
    RaterRepeats,
    RepeatPlan,
    Revert,
    RevertMark,
    Snapshot,
    at,
    when,
)
from auditor.client.retry import Safety

if TYPE_CHECKING:
    import pandas

HISTORY_PAGE = 5000


@dataclass
class State:
    """What a client keeps between calls: its project (asked of the server once when not
    given) and the server's limits as learned."""

    project: str | None = None
    limits: posting.Limits = field(default_factory=posting.Limits)


def _get(path: str, *params: tuple[str, Any], safety: Safety = Safety.READ) -> Call:
    """A GET with the query ``params`` that are not None (times as ISO 8601)."""
    query = tuple(
        (name, value.isoformat() if isinstance(value, datetime) else str(value))
        for name, value in params
        if value is not None
    )
    return Call("GET", path, safety, query)


def _project(state: State) -> Plan[str]:
    """The project's path, ``/api/v1/projects/<slug>``."""
    slug = state.project
    if slug is None:
        slug = (yield from key_info(state)).project
    return f"/api/v1/projects/{quote(slug, safe='')}"


def _id(value: str | int) -> str:
    return quote(str(value), safe="")


def key_info(state: State) -> Plan[KeyInfo]:
    """The project and role of this client's key."""
    answer = (yield _get("/api/v1/key")).json()
    if state.project is None:
        state.project = answer["project"]
    return KeyInfo(answer["project"], answer["role"])


def project(state: State) -> Plan[Project]:
    """The project: name, categories, settings and row counts (labels, items, raters...)."""
    a = (yield _get((yield from _project(state)))).json()
    return Project(a["slug"], a["name"], at(a["created_at"]), tuple(a["categories"]),
                   a["settings"], a.get("counts") or {})  # fmt: skip


def post_labels(
    state: State,
    labels: Iterable[posting.LabelLike],
    *,
    batch_size: int | None = None,
    idempotency_key: str | None = None,
) -> Plan[PostResult]:
    """Store any number of labels (``Label`` records or mappings of the import format's
    fields: item, rater, label, session, labeled_at, rater_kind, key), read lazily, in
    batches of at most the server's limit (or ``batch_size``). Each batch has its own
    Idempotency-Key (``idempotency_key`` + its place; random when not given) and is repeated
    with it after a 503, a 429 or a lost connection: never written twice. A refused batch
    raises ``LabelsRejected`` naming rows by their place in ``labels``; batches before it
    stay stored (a batch is all or nothing)."""
    path = f"{(yield from _project(state))}/labels"
    return (yield from posting.post_labels(path, state.limits, labels, batch_size,
                                           idempotency_key))  # fmt: skip


def plan_repeats(
    state: State, rater: str, limit: int = 10, *, request_id: str | None = None
) -> Plan[RepeatPlan]:
    """Up to ``limit`` items ``rater`` should see again, recorded as planned (docs/repeats.md).
    The same ``request_id`` gets the same plan (random when not given; the client repeats a
    lost request with it, so nothing is planned twice)."""
    request_id = request_id or uuid.uuid4().hex
    path = f"{(yield from _project(state))}/raters/{_id(rater)}/repeats"
    call = _get(path, ("limit", limit), ("request_id", request_id), safety=Safety.KEYED)
    return RepeatPlan.from_json((yield call).json(), request_id)


def repeat_status(state: State, rater: str) -> Plan[RepeatPlan]:
    """The rater's repeat counts (needed, have, outstanding); plans nothing."""
    path = f"{(yield from _project(state))}/raters/{_id(rater)}/repeats"
    return RepeatPlan.from_json((yield _get(path, ("limit", 0))).json(), None)


def repeat_report(state: State) -> Plan[list[RaterRepeats]]:
    """Every rater's repeats (``auditor repeats status``): planned, fulfilled, expired,
    outstanding, have, needed, self-agreement."""
    answer = (yield _get(f"{(yield from _project(state))}/repeats")).json()
    known = RaterRepeats.__dataclass_fields__
    return [RaterRepeats(**{k: v for k, v in r.items() if k in known}) for r in answer["raters"]]


def latest_snapshot(
    state: State, scope: str = "cumulative", *, at: datetime | str | None = None
) -> Plan[Snapshot]:
    """The latest snapshot of ``scope`` (or the one in force at ``at``)."""
    path = f"{(yield from _project(state))}/snapshots/latest"
    return Snapshot.from_json((yield _get(path, ("scope", scope), ("at", at))).json())


def snapshot(state: State, snapshot_id: int) -> Plan[Snapshot]:
    """One snapshot by its id."""
    path = f"{(yield from _project(state))}/snapshots/{int(snapshot_id)}"
    return Snapshot.from_json((yield _get(path)).json())


def wait_for_snapshot(
    state: State,
    *,
    labels: int | None = None,
    scope: str = "cumulative",
    timeout: float = 120.0,
    poll: float = 0.5,
) -> Plan[Snapshot]:
    """The latest snapshot of ``scope`` once it counts at least ``labels`` labels (its
    watermark; default: the project's label count now), asking every ``poll`` seconds.
    Recomputes run on the server's timer; ``RemoteFailure`` after ``timeout`` seconds."""
    found_project = yield from project(state)  # an unknown project is NotFound, not a wait
    if labels is None:
        labels = found_project.counts.get("labels", 0)
    deadline = time.monotonic() + timeout
    path = f"{(yield from _project(state))}/snapshots/latest"
    while True:
        reply = yield Call("GET", path, Safety.READ, (("scope", scope),), passthrough=_404)
        if reply.status == 200:
            found = Snapshot.from_json(reply.json())
            if found.watermark >= labels:
                return found
        if time.monotonic() >= deadline:
            raise RemoteFailure(
                f"no {scope} snapshot with {labels} labels after {timeout:g} s",
                status=None, code="timeout",
            )  # fmt: skip
        yield Pause(poll)


_404 = frozenset({404})


def _names(given: Sequence[str] | str | None) -> list[str]:
    """Scopes or subjects: one name alone is a list of one (not of its letters)."""
    return [given] if isinstance(given, str) else list(given or ())


def history(
    state: State,
    metric: str,
    *,
    subject: str = "project",
    scopes: Sequence[str] | str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> Plan[History]:
    """Every point of ``metric`` for ``subject`` ("project", "rater:ID", "model:ID",
    "pair:A|B") in (as_of, scope) order, as ``auditor history`` lists them, with the reverts
    in the range. ``scopes``: "cumulative", windows like "7d" (default: all)."""
    path = f"{(yield from _project(state))}/history"
    base = [("metric", metric), ("subject", subject), ("since", since), ("until", until)]
    base += [("scope", s) for s in _names(scopes)]
    points: list[HistoryPoint] = []
    after: str | None = None
    while True:
        page = (yield _get(path, *base, ("all", "true"), ("limit", HISTORY_PAGE),
                           ("after", after))).json()  # fmt: skip
        points.extend(HistoryPoint.from_json(p) for p in page["points"])
        after = page.get("next_after")
        if after is None:
            break
    reverts = tuple(
        RevertMark(m["import_id"], m["source"], when(m["reverted_at"]), m["labels"])
        for m in page["reverts"]
    )
    return History(metric, subject, tuple(points), reverts)


def history_frame(
    state: State,
    metric: str,
    *,
    subjects: Sequence[str] | str = ("project",),
    scopes: Sequence[str] | str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> Plan[pandas.DataFrame]:
    """The histories of ``metric`` for each of ``subjects`` in one pandas DataFrame (columns
    metric, subject, scope, as_of, computed_at, value, ci_low, ci_high, n, reason,
    snapshot_id; an undefined value is <NA> with its reason). Needs pandas."""
    from auditor.client.frames import _pandas, history_frame

    _pandas()  # before any request: say at once that pandas is missing
    found = []
    for subject in _names(subjects):
        found.append((yield from history(state, metric, subject=subject, scopes=scopes,
                                         since=since, until=until)))  # fmt: skip
    return history_frame(found)


def rater_report(state: State, rater: str) -> Plan[dict[str, Any]]:
    """What the latest cumulative snapshot says of one rater, and the history of each of her
    measures (the API's report, as a dict)."""
    path = f"{(yield from _project(state))}/raters/{_id(rater)}/report"
    return dict((yield _get(path)).json())


def imports(state: State) -> Plan[list[Import]]:
    """Every import of the project (files and API batches), oldest first."""
    answer = (yield _get(f"{(yield from _project(state))}/imports")).json()
    return [Import.from_json(row) for row in answer["imports"]]


def get_import(state: State, import_id: int) -> Plan[Import]:
    """One import by its id."""
    path = f"{(yield from _project(state))}/imports/{int(import_id)}"
    return Import.from_json((yield _get(path)).json())


def revert_import(state: State, import_id: int) -> Plan[Revert]:
    """Delete the labels of one import, in one transaction (admin key). Repeated only when
    the server certainly did nothing; a second revert is ``Conflict``."""
    path = f"{(yield from _project(state))}/imports/{int(import_id)}/revert"
    a = (yield Call("POST", path, Safety.ONCE)).json()
    return Revert(a["import_id"], a["deleted"], at(a["reverted_at"]), a["repeats"])


def alert_states(state: State) -> Plan[list[AlertState]]:
    """The current state of every (rule, subject)."""
    answer = (yield _get(f"{(yield from _project(state))}/alerts/states")).json()
    return [AlertState.from_json(row) for row in answer["states"]]


def alert_history(
    state: State,
    *,
    rule: str | None = None,
    subject: str | None = None,
    status: str | None = None,
    since: datetime | str | None = None,
    every: bool = False,
    limit: int = 100,
) -> Plan[AlertHistory]:
    """Evaluations, newest first: transitions only unless ``every``; filtered by ``rule``,
    ``subject``, ``status`` (a move to: ok, pending, firing, insufficient_data, resolved,
    repeat) and ``since``. ``more`` says how many ``limit`` left out."""
    path = f"{(yield from _project(state))}/alerts/history/evaluations"
    params = [("rule", rule), ("subject", subject), ("state", status), ("since", since)]
    answer = (yield _get(path, *params, ("all", str(every).lower()), ("limit", limit))).json()
    rows = tuple(Evaluation.from_json(row) for row in answer["evaluations"])
    return AlertHistory(rows, answer.get("more", 0))


def notifications(
    state: State, *, status: str | None = None, limit: int = 100
) -> Plan[list[Notification]]:
    """Notices in the outbox, newest first (status pending, sent or dead)."""
    path = f"{(yield from _project(state))}/alerts/history/notifications"
    answer = (yield _get(path, ("status", status), ("limit", limit))).json()
    return [Notification.from_json(row) for row in answer["notifications"]]
