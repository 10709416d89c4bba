"""Request and response bodies of the HTTP API (what the OpenAPI document describes)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    create_model,
)

from auditor.domain import parse_timestamp, time_out_of_range
from auditor.ingestion.batch import ID_MAX, TIMESTAMP_MAX
from auditor.ingestion.schemas import PROJECT_NAME_MAX, SLUG_PATTERN
from auditor.ingestion.text import FORBIDDEN_CLASS, forbidden_character, nfc
from auditor.stats.catalogue import Metric, metrics_for
from auditor.storage.key_models import IDEMPOTENCY_KEY_MAX

# StrictInt: in lax mode a too-long digit string would fail the str branch and then be read
# as an integer, slipping past max_length.
Id = Annotated[str, Field(min_length=1, max_length=ID_MAX)] | StrictInt
OptionalId = Annotated[str, Field(max_length=ID_MAX)] | StrictInt | None
RoleName = Literal["ingest", "read", "admin"]
SUBJECT_PATTERN = r"^(project|(rater|model|pair):[^\x00\n]+)$"  # no NUL (api.hygiene)
# Stored as given: no surrounding white space, no control, bidi-control or zero-width
# characters (auditor.ingestion.text). The check before the pattern names the code point.
_CONTROL = FORBIDDEN_CLASS
CATEGORY_PATTERN = rf"^[^\s{_CONTROL}](?:[^{_CONTROL}]*[^\s{_CONTROL}])?$"


def _no_forbidden(value: object) -> object:
    if isinstance(value, str):
        problem = forbidden_character(value)
        if problem is not None:
            raise ValueError(f"contains {problem}, which is not allowed")
        return nfc(value)
    return value


CategoryName = Annotated[
    str,
    Field(min_length=1, max_length=100, pattern=CATEGORY_PATTERN),
    BeforeValidator(_no_forbidden),
]
ProjectName = Annotated[
    str,
    Field(min_length=1, max_length=PROJECT_NAME_MAX, pattern=rf"^[^{_CONTROL}]*$"),
    BeforeValidator(_no_forbidden),
]


def _iso_only(value: object) -> object:
    # Pydantic would also take a number as Unix time, and more ISO 8601 forms than the API
    # documents: RFC 3339 (and its zone-less form, UTC) only (auditor.domain.parse_timestamp).
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not ISO_START.match(value):
        raise ValueError("expected an ISO 8601 time such as 2024-05-01T10:00:00Z")
    try:
        return parse_timestamp(value)
    except ValueError as error:
        raise ValueError(
            f"expected an RFC 3339 time such as 2024-05-01T10:00:00Z: {error}"
        ) from None


def _in_range(value: datetime) -> datetime:
    problem = time_out_of_range(value)
    if problem is not None:
        raise ValueError(problem)
    return value


ISO_START = re.compile(r"^\d{4}-\d{2}-\d{2}")
# Bounded (auditor.domain): a time outside [1970, 2100) UTC is a 422 naming the field.
IsoTime = Annotated[datetime, BeforeValidator(_iso_only), AfterValidator(_in_range)]


def _json_integer(value: object) -> object:
    # JSON Schema counts 30.0 as an integer, so it is taken (pydantic checks it is whole);
    # a string or a boolean is not a number here, though lax pydantic would convert it.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("expected an integer")
    return value


# Integers in [low, high]: the bounds come before the validator so the schema says
# minimum/maximum (after it, pydantic would write bare ge/le).
JsonInt = BeforeValidator(_json_integer)


class LabelBody(BaseModel):
    """One label: the fields of the import format (docs/api.md)."""

    model_config = ConfigDict(extra="forbid")

    item: Id
    rater: Id
    label: Id = Field(description="one of the project's category names")
    session: OptionalId = None
    labeled_at: Annotated[str, Field(max_length=TIMESTAMP_MAX)] | None = Field(
        default=None, description="ISO 8601; no zone = UTC; absent = when received"
    )
    rater_kind: Literal["human", "model"] | None = None
    key: OptionalId = Field(default=None, description="client key: a label stored once")


class LabelBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    labels: list[LabelBody] = Field(
        min_length=1, description="at most AUDITOR_API_MAX_BATCH_LABELS entries (10,000)"
    )


class IngestOut(BaseModel):
    inserted: int
    duplicates: int
    max_label_id: int | None
    import_id: int | None = None  # the batch's import record (GET .../imports/{id})


class ProjectCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: Annotated[str, Field(pattern=SLUG_PATTERN)]
    name: ProjectName | None = None
    categories: Annotated[
        list[CategoryName],
        Field(min_length=2, max_length=1000, json_schema_extra={"uniqueItems": True}),
    ]
    default_rules: StrictBool = Field(
        True,
        description="Install the default alert rules with a 'log' channel (docs/alerts.md); "
        "false: no rules.",
    )


class SettingsOut(BaseModel):
    collapse: str
    rho_mode: str
    rho_unrated: str
    rater_model: str
    interval_method: str
    interval_level: float
    bootstrap_resamples: int
    windows_days: list[int]
    recompute_interval_seconds: int
    scale: str
    weights: str


class ProjectOut(BaseModel):
    slug: str
    name: str
    created_at: datetime
    categories: list[str]
    settings: SettingsOut
    counts: dict[str, int] | None = None


class KeyOut(BaseModel):
    id: int
    role: RoleName
    prefix: str
    key: str = Field(description="the secret; shown in this response only")


class ProjectCreated(ProjectOut):
    admin_key: KeyOut


class CategoriesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    names: Annotated[
        list[CategoryName],
        Field(min_length=1, max_length=1000, json_schema_extra={"uniqueItems": True}),
    ]


class CategoriesOut(BaseModel):
    categories: list[str]


class RaterOut(BaseModel):
    rater: str
    kind: str
    labels: int


class RaterList(BaseModel):
    raters: list[RaterOut]
    next_after: str | None


class ItemOut(BaseModel):
    item: str
    metadata: dict[str, Any] | None = None
    labels: int | None = None


class ItemList(BaseModel):
    items: list[ItemOut]
    next_after: str | None


class SessionOut(BaseModel):
    id: int
    session: str
    rater: str
    started_at: datetime
    ended_at: datetime


class SessionList(BaseModel):
    sessions: list[SessionOut]
    next_after: int | None


class SnapshotSummary(BaseModel):
    id: int
    scope: str
    tick: int
    as_of: datetime
    computed_at: datetime
    window_start: datetime | None
    window_end: datetime | None
    watermark: int
    n_labels: int
    n_items: int
    n_raters: int
    duration_ms: float
    code_version: str


class SnapshotList(BaseModel):
    snapshots: list[SnapshotSummary]
    next_before: int | None


class HistoryPointOut(BaseModel):
    scope: str
    as_of: datetime
    computed_at: datetime
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None
    snapshot_id: int


class RevertMarkOut(BaseModel):
    """An import reverted: labels left the project at ``reverted_at``."""

    import_id: int
    source: str
    reverted_at: datetime | None
    labels: int | None


class HistoryOut(BaseModel):
    metric: str
    subject: str
    max_points: int
    points: list[HistoryPointOut]
    reverts: list[RevertMarkOut] = []
    next_after: str | None = Field(
        default=None, description="with all=true: the cursor of the next page (null: the last)"
    )


class MeasureOut(BaseModel):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    band: str | None = None
    ci_reason: str | None = None
    reason: str | None


class CohenRow(MeasureOut):
    rater: str
    n_items: int | None


def rater_report_model(metrics: Sequence[Metric]) -> type[BaseModel]:
    """The rater report's model: one field per computed rater metric of the catalogue (each
    documented in the OpenAPI schema by its description), so a metric added there is in the
    response without an edit here."""
    fields: dict[str, Any] = {
        "rater": (str, ...),
        "kind": (str, ...),
        "labels": (int, ...),
        "snapshot_id": (int | None, ...),
        "as_of": (datetime | None, ...),
        **{m.name: (MeasureOut | None, Field(description=m.description)) for m in metrics},
        "n_repeated_items": (int | None, ...),
        "model": (dict[str, MeasureOut] | None, ...),
        "pairwise_cohen": (list[CohenRow], ...),
        "history": (dict[str, list[HistoryPointOut]], ...),
    }
    return create_model("RaterReport", __module__=__name__, **fields)


RaterReport = rater_report_model(metrics_for("rater", from_stats=True))


IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1," + str(IDEMPOTENCY_KEY_MAX) + "}$"
