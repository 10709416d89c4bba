"""Alerts of a project: rules, channels, current states, history, silences.

Reading needs a ``read`` or ``admin`` key, changing an ``admin`` key. Every route is a thin
shell over ``auditor.services.alerts``; rule ids, channel names and silence ids are looked up
inside the key's project (another project's: 404). A service's ``Invalid`` names the body
field it is about (``field``); the API's error handler puts it in the 422's details.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Path, Query, Request, Response, status

from auditor.alerting import Rule
from auditor.api.deps import OPAQUE_MAX, Admin, Ids, Reader, ReadUow, Slug, WriteUow
from auditor.api.hygiene import CheckedJsonRoute
from auditor.api.schemas import IsoTime
from auditor.api.schemas_alerts import (
    ChannelCreated,
    ChannelIn,
    ChannelList,
    ChannelOut,
    ChannelPatch,
    DefaultRulesIn,
    DropRuleIn,
    EvaluationList,
    EvaluationOut,
    NotificationList,
    NotificationOut,
    RuleIn,
    RuleList,
    RuleOut,
    SilenceIn,
    SilenceList,
    SilenceOut,
    StateList,
    StateOut,
    ThresholdRuleIn,
)
from auditor.errors import NotFound
from auditor.services.access.public_ids import PublicIds
from auditor.services.alerts import channels, reads, rules, silences

router = APIRouter(prefix="/api/v1/projects", tags=["alerts"], route_class=CheckedJsonRoute)

RuleRef = Annotated[
    str, Path(min_length=1, max_length=200, description="a rule id ('<project>:<name>') or name")
]
ChannelName = Annotated[str, Path(min_length=1, max_length=100)]
INT32_MAX = 2**31 - 1
SilenceId = Annotated[int, Path(ge=0, le=OPAQUE_MAX, description="an opaque silence id")]
Limit = Annotated[int, Query(ge=1, le=1000, description="newest first, at most this many")]


def _seconds(delta: timedelta | None) -> int | None:
    return None if delta is None else int(delta.total_seconds())


def rule_out(rule: Rule) -> RuleOut:
    selector = rule.subject
    condition = rule.condition
    return RuleOut(
        id=rule.id,
        metric=rule.metric,
        subject=selector.kind.value + (f":{selector.ref}" if selector.ref else ""),
        scope=rule.scope,
        condition=condition.kind.value,
        threshold=condition.threshold,
        drop=condition.drop,
        lookback_seconds=_seconds(condition.lookback),
        margin=condition.margin,
        z=condition.z,
        min_n=rule.min_n,
        for_seconds=int(rule.for_.total_seconds()),
        keep_firing_for_seconds=int(rule.keep_firing_for.total_seconds()),
        severity=rule.severity.value,
        channels=list(rule.channels),
        repeat_interval_seconds=_seconds(rule.repeat_interval),
        enabled=rule.enabled,
    )


def _find_rule(uow: ReadUow, slug: str, ref: str) -> RuleOut:
    for rule in rules.list_rules(uow, slug):
        if rule.id in (ref, f"{slug}:{ref}"):
            return rule_out(rule)
    raise NotFound(f"project {slug!r} has no rule {ref!r}")


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


# --- rules ----------------------------------------------------------------------------------


@router.get("/{slug}/alerts/rules", response_model=RuleList)
def list_rules(slug: Slug, uow: ReadUow, _: Reader) -> RuleList:
    """The project's rules."""
    return RuleList(rules=[rule_out(rule) for rule in rules.list_rules(uow, slug)])


@router.post("/{slug}/alerts/rules", status_code=status.HTTP_201_CREATED, response_model=RuleOut)
def create_rule(slug: Slug, body: Annotated[RuleIn, Body()], uow: WriteUow, _: Admin) -> RuleOut:
    """Add a rule (admin). ``condition`` 'drop' takes ``drop`` and ``lookback_seconds``, the
    others a ``threshold``. Channels must exist (422 naming ``channels``); a name in use: 409."""
    drop = isinstance(body, DropRuleIn)
    spec = rules.RuleSpec(
        metric=body.metric,
        condition=body.condition,
        threshold=None if drop else body.threshold,  # type: ignore[union-attr]
        drop=body.drop if drop else None,  # type: ignore[union-attr]
        lookback=timedelta(seconds=body.lookback_seconds) if drop else None,  # type: ignore[union-attr]
        subject=body.subject,
        scope=body.scope,
        name=body.name,
        min_n=body.min_n,
        for_=timedelta(seconds=body.for_seconds),
        keep_firing_for=timedelta(seconds=body.keep_firing_for_seconds),
        severity=body.severity,
        channels=tuple(body.channels),
        repeat_interval=None
        if body.repeat_interval_seconds is None
        else timedelta(seconds=body.repeat_interval_seconds),
        enabled=body.enabled,
        margin=body.margin if isinstance(body, ThresholdRuleIn) else None,
        z=body.z if drop else None,  # type: ignore[union-attr]
    )
    return rule_out(rules.add_rule(uow, slug, spec))


@router.post("/{slug}/alerts/defaults", response_model=RuleList)
def install_default_rules(slug: Slug, body: DefaultRulesIn, uow: WriteUow, _: Admin) -> RuleList:
    """Install the ready-made rules (docs/alerts.md: kappa_S and rho lower bound below 0.667
    once known, a rater's self-agreement dropping by more than 0.15 and 3.5 standard errors in
    7 days, each rater's change detector, repeats short); returns those added (admin); with
    ``channels``, existing default rules get them too."""
    added = rules.install_default_rules(uow, slug, body.channels)
    return RuleList(rules=[rule_out(rule) for rule in added])


@router.get("/{slug}/alerts/rules/{rule}", response_model=RuleOut)
def get_rule(slug: Slug, rule: RuleRef, uow: ReadUow, _: Reader) -> RuleOut:
    return _find_rule(uow, slug, rule)


@router.delete(
    "/{slug}/alerts/rules/{rule}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response
)
def delete_rule(slug: Slug, rule: RuleRef, uow: WriteUow, _: Admin) -> Response:
    """Remove a rule and its states; its evaluation log and notices stay as history (admin)."""
    rules.remove_rule(uow, slug, rule)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _set_enabled(uow: WriteUow, slug: str, rule: str, enabled: bool) -> RuleOut:
    full = rules.set_rule_enabled(uow, slug, rule, enabled)
    return _find_rule(uow, slug, full)


@router.post("/{slug}/alerts/rules/{rule}/enable", response_model=RuleOut)
def enable_rule(slug: Slug, rule: RuleRef, uow: WriteUow, _: Admin) -> RuleOut:
    """Evaluate the rule again after every snapshot (admin)."""
    return _set_enabled(uow, slug, rule, True)


@router.post("/{slug}/alerts/rules/{rule}/disable", response_model=RuleOut)
def disable_rule(slug: Slug, rule: RuleRef, uow: WriteUow, _: Admin) -> RuleOut:
    """Stop evaluating the rule; its states stay as they are (admin)."""
    return _set_enabled(uow, slug, rule, False)


# --- channels -------------------------------------------------------------------------------


def channel_out(view: channels.ChannelView) -> ChannelOut:
    # ``config`` is the kind's description of its settings (no secret); the top-level
    # fields of the first kinds stay for clients that read them (null where not the kind's).
    settings = view.settings
    return ChannelOut(
        name=view.name,
        kind=view.kind,
        config=settings,
        url=settings.get("url"),
        email_host=settings.get("email_host"),
        email_port=settings.get("email_port"),
        email_from=settings.get("email_from"),
        email_to=list(settings.get("email_to") or ()),
        timeout_seconds=view.timeout_seconds,
        created_at=view.created_at,
    )


@router.get("/{slug}/alerts/channels", response_model=ChannelList)
def list_channels(slug: Slug, uow: ReadUow, _: Reader) -> ChannelList:
    """The project's channels, without secrets or passwords."""
    return ChannelList(channels=[channel_out(view) for view in channels.list_channels(uow, slug)])


@router.post(
    "/{slug}/alerts/channels", status_code=status.HTTP_201_CREATED, response_model=ChannelCreated
)
def create_channel(
    request: Request, slug: Slug, body: Annotated[ChannelIn, Body()], uow: WriteUow, _: Admin
) -> ChannelCreated:
    """Add a channel (admin): ``kind`` and the kind's settings in ``config``, checked by the
    kind's plugin (422 names the setting). A webhook gets a generated signing secret unless
    given one, returned in this response only. A webhook ``url`` or an ``email_host`` that
    resolves to a private, loopback or link-local address is refused (422 naming the field)
    unless the operator allows that network for the deployment
    (``AUDITOR_ALLOW_PRIVATE_TARGETS``)."""
    spec = channels.ChannelSpec(body.name, body.kind, body.settings(), body.timeout_seconds)
    allowed = request.app.state.settings.private_target_networks
    view, secret = channels.add_channel(uow, slug, spec, allowed)
    return ChannelCreated(**channel_out(view).model_dump(), secret=secret)


@router.patch("/{slug}/alerts/channels/{channel}", response_model=ChannelOut)
def update_channel(
    request: Request,
    slug: Slug,
    channel: ChannelName,
    body: Annotated[ChannelPatch, Body()],
    uow: WriteUow,
    _: Admin,
) -> ChannelOut:
    """Change a channel's settings (admin): those in ``config`` replace the stored ones, the
    others (a webhook secret, an SMTP password) stay; the result is checked again by the
    kind's plugin (422 names the setting). Rules sending to the channel keep it: this is how
    a secret or password is rotated."""
    change = channels.ChannelChange(body.config, body.timeout_seconds)
    allowed = request.app.state.settings.private_target_networks
    return channel_out(channels.update_channel(uow, slug, channel, change, allowed))


@router.delete(
    "/{slug}/alerts/channels/{channel}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
)
def delete_channel(slug: Slug, channel: ChannelName, uow: WriteUow, _: Admin) -> Response:
    """Remove a channel no rule uses (409 names the rules that do) (admin)."""
    channels.remove_channel(uow, slug, channel)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


# --- states and history ---------------------------------------------------------------------


@router.get("/{slug}/alerts/states", response_model=StateList)
def alert_states(slug: Slug, uow: ReadUow, who: Reader, ids: Ids) -> StateList:
    """The current state of every (rule, subject): ok, pending, firing or insufficient_data,
    and the value it was last judged on."""
    views = reads.alert_status(uow, slug)
    return StateList(
        states=[
            StateOut(
                **{
                    **vars(view),
                    "snapshot_id": ids.maybe("snapshot", who.project_id, view.snapshot_id),
                }
            )
            for view in views
        ]
    )


@router.get("/{slug}/alerts/history/evaluations", response_model=EvaluationList)
def evaluation_history(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    rule: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    subject: Annotated[
        str | None,
        Query(max_length=300, pattern=r"^(project|(rater|model):.+)$", description="rater:ID"),
    ] = None,
    state: Annotated[
        Literal["ok", "pending", "firing", "insufficient_data", "resolved", "repeat"] | None,
        Query(description="only moves to this state (resolved: firing -> ok)"),
    ] = None,
    since: Annotated[
        IsoTime | None, Query(description="ISO 8601, inclusive; no zone = UTC")
    ] = None,
    every: Annotated[
        bool, Query(alias="all", description="every evaluation, not only transitions")
    ] = False,
    limit: Limit = 100,
) -> EvaluationList:
    """What happened, newest first: by default the transitions (a status change, or a
    repeat notice), with ``all=true`` every evaluation; each row has the verdict, the value
    judged, the transition, ``change`` and the notices it wrote."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # a time without a zone is UTC, as everywhere
    where = reads.HistoryFilter(rule, subject, since, state, every, limit)
    page = reads.alert_history(uow, slug, where)
    project = who.project_id
    evaluations = []
    for row in page.rows:
        e = row.evaluation
        fields = {**vars(e), "subject": e.subject_key, "change": row.change}
        fields["id"] = ids.encode("evaluation", project, e.id or 0)
        fields["snapshot_id"] = ids.encode("snapshot", project, e.snapshot_id)
        fields["silence_id"] = ids.maybe("silence", project, e.silence_id)
        evaluations.append(EvaluationOut(**fields))
    return EvaluationList(
        evaluations=evaluations,
        truncated=page.more > 0,
        more=page.more,
    )


@router.get("/{slug}/alerts/history/notifications", response_model=NotificationList)
def notification_history(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    status_: Annotated[Literal["pending", "sent", "dead"] | None, Query(alias="status")] = None,
    limit: Limit = 100,
) -> NotificationList:
    """Notices in the outbox, newest first, with their delivery status and attempts."""
    rows = reads.notification_history(uow, slug, status=status_, limit=limit)
    return NotificationList(
        notifications=[
            NotificationOut(
                **{
                    **vars(row),
                    "subject": row.subject_key,
                    "id": ids.encode("notification", who.project_id, row.id or 0),
                }
            )
            for row in rows
        ]
    )


# --- silences -------------------------------------------------------------------------------


def silence_out(view: silences.SilenceView, ids: PublicIds, project_id: int) -> SilenceOut:
    return SilenceOut(**{**vars(view), "id": ids.encode("silence", project_id, view.id)})


@router.get("/{slug}/alerts/silences", response_model=SilenceList)
def list_silences(
    slug: Slug,
    uow: ReadUow,
    who: Reader,
    ids: Ids,
    include_ended: Annotated[bool, Query(description="also silences that have ended")] = False,
) -> SilenceList:
    views = silences.list_silences(uow, slug, include_ended=include_ended)
    return SilenceList(silences=[silence_out(view, ids, who.project_id) for view in views])


@router.post(
    "/{slug}/alerts/silences", status_code=status.HTTP_201_CREATED, response_model=SilenceOut
)
def create_silence(
    slug: Slug, body: SilenceIn, uow: WriteUow, principal: Admin, ids: Ids
) -> SilenceOut:
    """Mute the notices of a rule, a subject, or both, until ``ends_at`` (states keep moving).
    Muting the whole project needs a ``reason``. A rule of another project: 404 (admin)."""
    view = silences.add_silence(
        uow,
        slug,
        ends_at=_utc(body.ends_at),  # type: ignore[arg-type]
        starts_at=_utc(body.starts_at),
        rule_id=body.rule,
        subject=body.subject,
        reason=body.reason,
        created_by=f"api key {ids.encode('key', principal.project_id, principal.key_id)}",
    )
    return silence_out(view, ids, principal.project_id)


@router.post(
    "/{slug}/alerts/silences/{silence_id}/end",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
)
def end_silence(slug: Slug, silence_id: SilenceId, uow: WriteUow, who: Admin, ids: Ids) -> Response:
    """End an active silence now (it stays listed with include_ended); one that has not
    started is cancelled (admin)."""
    found = ids.decode("silence", who.project_id, silence_id)
    try:
        if found is None or found > INT32_MAX:  # silence ids are 32-bit: no such row
            raise NotFound("")
        silences.end_silence(uow, slug, found)
    except NotFound:
        raise NotFound(f"project {slug!r} has no active silence {silence_id}") from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)
