"""The tables, as SQLAlchemy 2 typed models.

Cross-project integrity is enforced by the database, not only by the code: items, raters,
sessions and categories carry a UNIQUE (project_id, id), and a label references each of them
through a composite foreign key that includes its own project_id, so a label can never point at
a row of another project. A session references its rater the same way, and a label's session
must belong to the label's rater: (project_id, rater_id, session_id) -> sessions.

Timestamps are ``UtcMicros`` (BIGINT microseconds since the epoch; see ``db.py``).
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from auditor.domain import (
    CollapsePolicy,
    IntervalMethod,
    ProjectSettings,
    RaterKind,
    RaterModel,
    RepeatSettings,
    RhoMode,
    RhoUnrated,
    Scale,
    Weights,
)
from auditor.storage.db import Base, BigId, UtcMicros

SLUG_MAX = 64
NAME_MAX = 200
EXTERNAL_ID_MAX = 200
CATEGORY_NAME_MAX = 100
CLIENT_KEY_MAX = 200

_DEFAULTS = ProjectSettings()
_REPEATS = RepeatSettings()


def _one_of(column: str, enum: type[Enum]) -> str:
    values = ", ".join(f"'{member.value}'" for member in enum)
    return f"{column} IN ({values})"


def _one_of_values(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def _literal(value: object) -> Any:
    return text(f"'{value}'") if isinstance(value, str) else text(str(value))


def windows_to_text(windows_days: tuple[int, ...]) -> str:
    return ",".join(str(days) for days in windows_days)


def windows_from_text(stored: str) -> tuple[int, ...]:
    return tuple(int(part) for part in stored.split(",") if part)


class Project(Base):
    __tablename__ = "projects"
    __table_args__ = (
        CheckConstraint(_one_of("collapse", CollapsePolicy), name="collapse"),
        CheckConstraint(_one_of("rho_mode", RhoMode), name="rho_mode"),
        CheckConstraint(_one_of("rho_unrated", RhoUnrated), name="rho_unrated"),
        CheckConstraint(_one_of("rater_model", RaterModel), name="rater_model"),
        CheckConstraint(_one_of("interval_method", IntervalMethod), name="interval_method"),
        CheckConstraint(_one_of("scale", Scale), name="scale"),
        CheckConstraint(_one_of("weights", Weights), name="weights"),
        CheckConstraint("interval_level >= 0.5 AND interval_level < 1", name="interval_level"),
        CheckConstraint("bootstrap_resamples >= 10", name="bootstrap_resamples"),
        CheckConstraint("recompute_interval_seconds > 0", name="recompute_interval"),
        CheckConstraint("slug <> ''", name="slug_not_empty"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(SLUG_MAX), unique=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
    collapse: Mapped[str] = mapped_column(
        String(16), server_default=_literal(_DEFAULTS.collapse.value)
    )
    rho_mode: Mapped[str] = mapped_column(
        String(16), server_default=_literal(_DEFAULTS.rho_mode.value)
    )
    rho_unrated: Mapped[str] = mapped_column(
        String(16), server_default=_literal(_DEFAULTS.rho_unrated.value)
    )
    rater_model: Mapped[str] = mapped_column(
        String(16), server_default=_literal(_DEFAULTS.rater_model.value)
    )
    interval_method: Mapped[str] = mapped_column(
        String(16), server_default=_literal(_DEFAULTS.interval_method.value)
    )
    interval_level: Mapped[float] = mapped_column(
        Float, server_default=_literal(_DEFAULTS.interval_level)
    )
    bootstrap_resamples: Mapped[int] = mapped_column(
        Integer, server_default=_literal(_DEFAULTS.bootstrap_resamples)
    )
    # Rolling windows in days, comma-separated ("7,30"): a short list read whole, never queried.
    windows_days: Mapped[str] = mapped_column(
        String(200), server_default=_literal(windows_to_text(_DEFAULTS.windows_days))
    )
    recompute_interval_seconds: Mapped[int] = mapped_column(
        Integer, server_default=_literal(_DEFAULTS.recompute_interval_seconds)
    )
    # nominal | ordinal, and the agreement weights of an ordinal scale (docs/measures.md)
    scale: Mapped[str] = mapped_column(String(16), server_default=_literal(_DEFAULTS.scale.value))
    weights: Mapped[str] = mapped_column(
        String(16), server_default=_literal(_DEFAULTS.weights.value)
    )
    # The repeat planner's settings (auditor.domain.RepeatSettings, docs/repeats.md).
    repeat_share: Mapped[float] = mapped_column(Float, server_default=_literal(_REPEATS.share))
    repeat_min_gap_hours: Mapped[float] = mapped_column(
        Float, server_default=_literal(_REPEATS.min_gap_hours)
    )
    repeat_min_gap_items: Mapped[int] = mapped_column(
        Integer, server_default=_literal(_REPEATS.min_gap_items)
    )
    repeat_half_width: Mapped[float] = mapped_column(
        Float, server_default=_literal(_REPEATS.half_width)
    )
    repeat_open_days: Mapped[float] = mapped_column(
        Float, server_default=_literal(_REPEATS.open_days)
    )

    def settings(self) -> ProjectSettings:
        return ProjectSettings(
            collapse=CollapsePolicy(self.collapse),
            rho_mode=RhoMode(self.rho_mode),
            rho_unrated=RhoUnrated(self.rho_unrated),
            rater_model=RaterModel(self.rater_model),
            interval_method=IntervalMethod(self.interval_method),
            interval_level=self.interval_level,
            bootstrap_resamples=self.bootstrap_resamples,
            windows_days=windows_from_text(self.windows_days),
            recompute_interval_seconds=self.recompute_interval_seconds,
            scale=Scale(self.scale),
            weights=Weights(self.weights),
        )

    def repeat_settings(self) -> RepeatSettings:
        return RepeatSettings(
            share=self.repeat_share,
            min_gap_hours=self.repeat_min_gap_hours,
            min_gap_items=self.repeat_min_gap_items,
            half_width=self.repeat_half_width,
            open_days=self.repeat_open_days,
        )

    def apply_repeat_settings(self, settings: RepeatSettings) -> None:
        self.repeat_share = settings.share
        self.repeat_min_gap_hours = settings.min_gap_hours
        self.repeat_min_gap_items = settings.min_gap_items
        self.repeat_half_width = settings.half_width
        self.repeat_open_days = settings.open_days

    def apply_settings(self, settings: ProjectSettings) -> None:
        self.collapse = settings.collapse.value
        self.rho_mode = settings.rho_mode.value
        self.rho_unrated = settings.rho_unrated.value
        self.rater_model = settings.rater_model.value
        self.interval_method = settings.interval_method.value
        self.interval_level = settings.interval_level
        self.bootstrap_resamples = settings.bootstrap_resamples
        self.windows_days = windows_to_text(settings.windows_days)
        self.recompute_interval_seconds = settings.recompute_interval_seconds
        self.scale = settings.scale.value
        self.weights = settings.weights.value


class Category(Base):
    """One entry of a project's ordered nominal vocabulary; ``position`` is its index 0..K-1."""

    __tablename__ = "categories"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        UniqueConstraint("project_id", "position"),
        UniqueConstraint("project_id", "name"),
        CheckConstraint("position >= 0", name="position_not_negative"),
        CheckConstraint("name <> ''", name="name_not_empty"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(CATEGORY_NAME_MAX))


class Rater(Base):
    __tablename__ = "raters"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        UniqueConstraint("project_id", "external_id"),
        CheckConstraint(_one_of("kind", RaterKind), name="kind"),
        CheckConstraint("external_id <> ''", name="external_id_not_empty"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_MAX))
    kind: Mapped[str] = mapped_column(String(8), server_default=_literal(RaterKind.HUMAN.value))
    display_name: Mapped[str | None] = mapped_column(String(NAME_MAX))


class Item(Base):
    __tablename__ = "items"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        UniqueConstraint("project_id", "external_id"),
        CheckConstraint("external_id <> ''", name="external_id_not_empty"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_MAX))
    # "metadata" is reserved on declarative classes, hence the attribute name.
    meta: Mapped[dict[str, Any] | None] = mapped_column(
        "metadata", JSON().with_variant(JSONB(), "postgresql")
    )


class Session(Base):
    """One sitting of one rater; started_at/ended_at span the labels seen in it so far."""

    __tablename__ = "sessions"
    __table_args__ = (
        UniqueConstraint("project_id", "rater_id", "id"),
        UniqueConstraint("project_id", "rater_id", "external_id"),
        ForeignKeyConstraint(["project_id", "rater_id"], ["raters.project_id", "raters.id"]),
        CheckConstraint("external_id <> ''", name="external_id_not_empty"),
        CheckConstraint("ended_at >= started_at", name="ended_after_started"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rater_id: Mapped[int] = mapped_column(Integer)
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_MAX))
    started_at: Mapped[datetime] = mapped_column(UtcMicros)
    ended_at: Mapped[datetime] = mapped_column(UtcMicros)


class Label(Base):
    """One judgement. ``id`` is monotone (AUTOINCREMENT on SQLite, a sequence on PostgreSQL):
    later parts use the highest id seen as a watermark.

    Its references (item, rater, category, and session of the same rater, all of the label's
    project) are enforced by triggers created in migration 0001, not by foreign keys: one
    set-based check per statement on PostgreSQL instead of 3-4 row-by-row checks per label
    (see the migration's docstring for the trade-off). They are not declared here, so
    ``create_all`` alone does not give them: databases are made by the migrations."""

    __tablename__ = "labels"
    __table_args__ = (
        # A key is unique in its project; labels without one (most) are not in the index
        # (migration 0013: a NULL entry per label cost a sixth of a bulk insert).
        Index(
            "uq_labels_project_id_client_key",
            "project_id",
            "client_key",
            unique=True,
            postgresql_where=text("client_key IS NOT NULL"),
            sqlite_where=text("client_key IS NOT NULL"),
        ),
        Index("ix_labels_project_id_id", "project_id", "id"),
        Index("ix_labels_project_id_labeled_at", "project_id", "labeled_at"),
        # The natural identity (item, rater, session, labeled_at): finds a re-imported label.
        Index("ix_labels_identity", "project_id", "item_id", "rater_id", "labeled_at"),
        CheckConstraint("client_key <> ''", name="client_key_not_empty"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    # No foreign key: the reference triggers pin the project (see the class docstring).
    project_id: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[int] = mapped_column(BigId)
    rater_id: Mapped[int] = mapped_column(Integer)
    session_id: Mapped[int | None] = mapped_column(BigId)
    category_id: Mapped[int] = mapped_column(Integer)
    labeled_at: Mapped[datetime] = mapped_column(UtcMicros)
    received_at: Mapped[datetime] = mapped_column(UtcMicros)
    client_key: Mapped[str | None] = mapped_column(String(CLIENT_KEY_MAX))
    # The import (file or API batch) that wrote it; None for labels older than migration 0008.
    import_id: Mapped[int | None] = mapped_column(BigId)


REPEAT_STATUSES = ("open", "fulfilled", "expired")


class PlannedRepeat(Base):
    """One hidden repeat the planner proposed: rater ``rater_id`` is to see ``item_id`` again.

    ``open`` until that rater's next label on the item (``fulfilled``, set in the ingest
    transaction) or until ``expires_at`` (``expired``). At most one open repeat per
    (project, rater, item): a partial unique index.
    """

    __tablename__ = "planned_repeats"
    # No foreign keys to items and raters, as for labels: truncating or deleting them with
    # their labels stays allowed (reference_triggers); the project's cascade removes these.
    __table_args__ = (
        CheckConstraint(_one_of_values("status", REPEAT_STATUSES), name="status"),
        Index(
            "uq_planned_repeats_open",
            "project_id",
            "rater_id",
            "item_id",
            unique=True,
            postgresql_where=text("status = 'open'"),
            sqlite_where=text("status = 'open'"),
        ),
        Index("ix_planned_repeats_project_id_rater_id", "project_id", "rater_id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    rater_id: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[int] = mapped_column(BigId)
    first_labeled_at: Mapped[datetime] = mapped_column(UtcMicros)
    planned_at: Mapped[datetime] = mapped_column(UtcMicros)
    expires_at: Mapped[datetime] = mapped_column(UtcMicros)
    reason: Mapped[str] = mapped_column(String(NAME_MAX))
    request_id: Mapped[str | None] = mapped_column(String(CLIENT_KEY_MAX))
    status: Mapped[str] = mapped_column(String(16), server_default=_literal("open"))
    fulfilled_label_id: Mapped[int | None] = mapped_column(BigId)


class RepeatRequest(Base):
    """The answer given to one (project, rater, request_id): the same request gets it again."""

    __tablename__ = "repeat_requests"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    rater_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    request_id: Mapped[str] = mapped_column(String(CLIENT_KEY_MAX), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UtcMicros)
    response: Mapped[dict[str, Any]] = mapped_column(JSON().with_variant(JSONB(), "postgresql"))


class LabelStudioAnnotation(Base):
    """The newest version seen of one Label Studio annotation (``updated_at`` in microseconds),
    or its deletion, kept for ever: replays and late events change nothing. Its label, if any,
    carries the client key ``label-studio:<annotation id>``. A prediction is kept the same way
    under ``prediction:<id>``, with its model and label (what an annotation made from it is
    compared with). ``task_id``: the task it belongs to (a deleted task takes it along); None
    for rows stored before it was kept, until the next sync."""

    __tablename__ = "label_studio_annotations"
    __table_args__ = (
        Index("ix_label_studio_annotations_project_id_task_id", "project_id", "task_id"),
    )

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    annotation_id: Mapped[str] = mapped_column(String(CLIENT_KEY_MAX), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)
    deleted: Mapped[bool] = mapped_column(Boolean, server_default=false())
    task_id: Mapped[str | None] = mapped_column(String(CLIENT_KEY_MAX))
    model_version: Mapped[str | None] = mapped_column(String(CLIENT_KEY_MAX))
    label: Mapped[str | None] = mapped_column(String(CATEGORY_NAME_MAX))
