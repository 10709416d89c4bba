"""Request and response bodies of the alert routes (rules, channels, states, history,
silences).

The request models say in the schema what the services check where they can (names, scopes,
which fields a condition or a channel kind takes), so a client learns the rules from the
OpenAPI document; what depends on stored state (a channel a rule names, an existing name, a
webhook host that resolves to a private address) is checked by the services and answered
with 404/409/422.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
)

from auditor.api.schemas import IsoTime, JsonInt
from auditor.domain import (
    NAME_PATTERN,
    SCOPE_PATTERN,
)
from auditor.errors import Invalid
from auditor.notifiers.kinds import KINDS

# The services' name rule (auditor.alerting.rules._NAME); metrics are stored in 64 characters.
METRIC_PATTERN = r"^[a-z][a-z0-9_.:-]{0,63}$"
# [^\x00\n], not ".": a NUL is refused before validation, so the schema must not allow it.
RULE_SUBJECT_PATTERN = r"^(project|every_rater|(rater|model):[^\x00\n]{1,200})$"
SILENCE_SUBJECT_PATTERN = r"^(project|(rater|model):[^\x00\n]{1,200})$"
MAX_SECONDS = 10 * 366 * 86400  # ten years: longer is a typo, not a policy


def _unique(names: list[str]) -> list[str]:
    if len(set(names)) != len(names):
        raise ValueError("names must not repeat")
    return names


Name = Annotated[str, Field(pattern=NAME_PATTERN)]
Seconds = Annotated[int, Field(ge=0, le=MAX_SECONDS), JsonInt]
PositiveSeconds = Annotated[int, Field(ge=1, le=MAX_SECONDS), JsonInt]
MinN = Annotated[int, Field(ge=1, le=2**31 - 1), JsonInt]
Port = Annotated[int, Field(ge=1, le=65535), JsonInt]
# Strict: a JSON string or boolean is not a number or a flag (lax mode would convert "0.5").
Finite = Annotated[float, Strict(), Field(ge=-1e6, le=1e6, allow_inf_nan=False)]
Channels = Annotated[
    list[Name],
    Field(max_length=20, json_schema_extra={"uniqueItems": True}),
    AfterValidator(_unique),
]
Timeout = Annotated[float, Strict(), Field(gt=0, le=60, allow_inf_nan=False)]


class _RuleFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: Annotated[str, Field(pattern=METRIC_PATTERN, description="a metric point name")]
    subject: Annotated[
        str,
        Field(
            pattern=RULE_SUBJECT_PATTERN,
            description="'project', 'every_rater', 'rater:ID' or 'model:ID'",
        ),
    ] = "project"
    scope: Annotated[str, Field(pattern=SCOPE_PATTERN)] = "cumulative"
    name: Annotated[
        Name | None, Field(description="the rule's id is '<project>:<name>'; absent: generated")
    ] = None
    min_n: MinN = 10
    for_seconds: Seconds = 0
    keep_firing_for_seconds: Seconds = 0
    severity: Literal["info", "warning", "critical"] = "warning"
    channels: Channels = []
    repeat_interval_seconds: Annotated[
        PositiveSeconds | None, Field(description="null: never repeat")
    ] = 86400
    enabled: StrictBool = True


_Positive = Annotated[float, Strict(), Field(gt=0, le=1e6, allow_inf_nan=False)]


class ThresholdRuleIn(_RuleFields):
    condition: Literal[
        "below", "confidently_below", "not_confidently_above", "above", "confidently_above"
    ]
    threshold: Finite
    margin: Annotated[
        _Positive | None,
        Field(
            description="bound conditions: an interval wider than this that holds the "
            "threshold is insufficient data (not yet known); null: any width"
        ),
    ] = None


class DropRuleIn(_RuleFields):
    condition: Literal["drop"]
    drop: _Positive
    lookback_seconds: PositiveSeconds
    z: Annotated[
        _Positive | None,
        Field(description="the drop must also be this many standard errors; null: size only"),
    ] = None


class RaterChangeRuleIn(_RuleFields):
    condition: Literal["rater_change"]
    threshold: Annotated[_Positive, Field(description="the CUSUM's decision limit h")]


RuleIn = Annotated[
    ThresholdRuleIn | DropRuleIn | RaterChangeRuleIn, Field(discriminator="condition")
]


class DefaultRulesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    channels: Channels = []


class RuleOut(BaseModel):
    id: str
    metric: str
    subject: str
    scope: str
    condition: str
    threshold: float | None
    drop: float | None
    lookback_seconds: int | None
    margin: float | None = None
    z: float | None = None
    min_n: int
    for_seconds: int
    keep_firing_for_seconds: int
    severity: str
    channels: list[str]
    repeat_interval_seconds: int | None
    enabled: bool


class RuleList(BaseModel):
    rules: list[RuleOut]


ChannelConfig = Annotated[
    dict[str, Any],
    Field(
        max_length=50,
        description="the kind's settings, checked by its plugin (422 names the setting): "
        "webhook: url (http(s); refused when its host resolves to a private, loopback or "
        "link-local address outside the operator's AUDITOR_ALLOW_PRIVATE_TARGETS), secret "
        "(absent: generated); email: email_host, email_port (25), email_from, email_to (a "
        "list), starttls (false), username and password (together, with starttls); log: none. "
        "See docs/alerts.md.",
    ),
]
URL_PATTERN = r"^https?://[^\x00]*$"
_LEGACY = "deprecated: the same setting in config"


class ChannelIn(BaseModel):
    """A channel: its kind (a plugin of ``auditor.notifiers.kinds``) and the kind's settings
    in ``config``. The settings of the first kinds are also taken at the top level, as
    before ``config`` existed (a setting given both ways must agree)."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    kind: Annotated[str, Field(json_schema_extra={"enum": list(KINDS)})]
    timeout_seconds: Timeout = 10.0
    config: ChannelConfig = {}
    url: Annotated[str, Field(min_length=1, max_length=2000, pattern=URL_PATTERN)] | None = Field(
        None, description=_LEGACY
    )
    email_host: Annotated[str, Field(min_length=1, max_length=255)] | None = Field(
        None, description=_LEGACY
    )
    email_port: Port | None = Field(None, description=_LEGACY)
    email_from: Annotated[str, Field(min_length=1, max_length=320)] | None = Field(
        None, description=_LEGACY
    )
    email_to: (
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=320)]],
            Field(min_length=1, max_length=50),
        ]
        | None
    ) = Field(None, description=_LEGACY)
    starttls: StrictBool | None = Field(None, description=_LEGACY)
    username: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        None, description=_LEGACY
    )
    password: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        None, description=_LEGACY + "; stored, never returned"
    )

    def settings(self) -> dict[str, Any]:
        """``config`` with the top-level settings given; one given twice must agree."""
        legacy = self.model_dump(
            exclude={"name", "kind", "timeout_seconds", "config"}, exclude_none=True
        )
        for key, value in legacy.items():
            if key in self.config and self.config[key] != value:
                raise Invalid(f"{key} is given twice, differently (top level, config)", field=key)
        return {**legacy, **self.config}


class ChannelPatch(BaseModel):
    """Settings to change; those absent (secrets included) keep their value."""

    model_config = ConfigDict(extra="forbid")

    config: ChannelConfig = {}
    timeout_seconds: Timeout | None = None


class ChannelOut(BaseModel):
    name: str
    kind: str
    config: dict[str, Any] = Field(description="the kind's settings, without secrets")
    url: str | None = Field(description=_LEGACY)
    email_host: str | None = Field(description=_LEGACY)
    email_port: int | None = Field(description=_LEGACY)
    email_from: str | None = Field(description=_LEGACY)
    email_to: list[str] = Field(description=_LEGACY)
    timeout_seconds: float
    created_at: datetime


class ChannelCreated(ChannelOut):
    secret: str | None = Field(
        description="webhook: the HMAC-SHA256 signing secret, in this response only"
    )


class ChannelList(BaseModel):
    channels: list[ChannelOut]


class StateOut(BaseModel):
    rule_id: str
    subject: str
    status: str
    since: datetime | None
    evaluated_at: datetime | None
    episode_start: datetime | None
    value: float | None
    reason: str | None
    snapshot_id: int | None


class StateList(BaseModel):
    states: list[StateOut]


class EvaluationOut(BaseModel):
    id: int
    rule_id: str
    subject: str
    snapshot_id: int
    evaluated_at: datetime
    verdict: str
    judged_value: float | None
    limit_value: float | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    lookback_value: float | None
    reason: str
    from_status: str
    to_status: str
    silence_id: int | None
    event_ids: list[str]
    suppressed_event_ids: list[str]
    # resolved | repeat | the status moved to | "" (the evaluation confirmed its state)
    change: str = ""


class EvaluationList(BaseModel):
    evaluations: list[EvaluationOut]
    truncated: bool = False  # more rows match than ``limit``: narrow with since/state or raise it
    more: int = 0  # how many matching rows were left out


class NotificationOut(BaseModel):
    id: int
    event_id: str
    channel: str
    rule_id: str
    subject: str
    kind: str
    sequence: int
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    last_status_code: int | None
    created_at: datetime
    sent_at: datetime | None


class NotificationList(BaseModel):
    notifications: list[NotificationOut]


class SilenceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ends_at: IsoTime = Field(description="ISO 8601; no zone = UTC")
    starts_at: IsoTime | None = Field(default=None, description="ISO 8601; absent: now")
    rule: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        default=None, description="a rule id or name of this project"
    )
    subject: Annotated[str, Field(pattern=SILENCE_SUBJECT_PATTERN)] | None = None
    reason: Annotated[
        str, Field(max_length=1000, description="required when neither rule nor subject")
    ] = ""


class SilenceOut(BaseModel):
    id: int
    rule_id: str | None
    subject: str | None
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str


class SilenceList(BaseModel):
    silences: list[SilenceOut]
