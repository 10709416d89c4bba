"""What the client returns: frozen records of the API's answers, with times as aware
``datetime`` values. Field names are the API's (docs/api.md); ids are the opaque ids a
project key sees."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas


def when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def at(value: str) -> datetime:
    return datetime.fromisoformat(value)


@dataclass(frozen=True)
class Label:
    """One label to post: the fields of the import format. ``labeled_at``: an aware
    ``datetime`` or an ISO 8601 string (no zone = UTC); absent = when received. Plain
    mappings with these keys are taken too."""

    item: str | int
    rater: str | int
    label: str | int
    session: str | int | None = None
    labeled_at: datetime | str | None = None
    rater_kind: str | None = None  # "human" (default) or "model"
    key: str | int | None = None


@dataclass(frozen=True)
class PostResult:
    """What ``post_labels`` stored: labels sent, inserted, counted as duplicates; batches
    sent, and how many of them the server replayed (already stored by an earlier attempt
    with the same key: nothing written twice)."""

    labels: int = 0
    inserted: int = 0
    duplicates: int = 0
    batches: int = 0
    replayed: int = 0
    import_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class KeyInfo:
    project: str
    role: str


@dataclass(frozen=True)
class Project:
    slug: str
    name: str
    created_at: datetime
    categories: tuple[str, ...]
    settings: Mapping[str, Any]
    counts: Mapping[str, int]


@dataclass(frozen=True)
class HistoryPoint:
    """One snapshot's value of a metric (as ``auditor history`` prints it)."""

    scope: str
    as_of: datetime
    computed_at: datetime
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    reason: str | None
    snapshot_id: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HistoryPoint:
        return cls(
            data["scope"], at(data["as_of"]), at(data["computed_at"]), data["value"],
            data["ci_low"], data["ci_high"], data["n"], data["reason"], data["snapshot_id"],
        )  # fmt: skip

    def record(self) -> dict[str, Any]:
        """The row of ``auditor history --format json``."""
        return {
            "as_of": self.as_of.isoformat(),
            "scope": self.scope,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class RevertMark:
    """An import reverted: ``labels`` left the project at ``reverted_at``."""

    import_id: int
    source: str
    reverted_at: datetime | None
    labels: int | None


@dataclass(frozen=True)
class History:
    """A metric's history for one subject: every point (``auditor history``'s rows) in
    (as_of, scope) order, and the reverts in the range. Iterating gives the points."""

    metric: str
    subject: str
    points: tuple[HistoryPoint, ...]
    reverts: tuple[RevertMark, ...] = ()

    def __iter__(self) -> Iterator[HistoryPoint]:
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    def records(self) -> list[dict[str, Any]]:
        """The points as ``auditor history --format json`` prints them."""
        return [point.record() for point in self.points]

    def to_frame(self) -> pandas.DataFrame:
        """A pandas DataFrame, one row per point (needs pandas: ``pip install pandas``)."""
        from auditor.client.frames import history_frame

        return history_frame([self])


@dataclass(frozen=True)
class Snapshot:
    """One snapshot in full: ``result`` is the ``auditor stats --json`` shape (``measures``,
    ``raters``, ``models``, ``pairwise_cohen``...), ``meta`` its ``snapshot`` object (id,
    scope, tick, as_of, watermark = the project's label count, settings...)."""

    result: Mapping[str, Any]
    meta: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Snapshot:
        body = dict(data)
        return cls(result=body, meta=body.pop("snapshot"))

    @property
    def id(self) -> int:
        return int(self.meta["id"])

    @property
    def as_of(self) -> datetime:
        return at(self.meta["as_of"])

    @property
    def watermark(self) -> int:
        return int(self.meta["watermark"])

    def measure(self, metric: str, subject: str = "project") -> Mapping[str, Any] | None:
        """One measure (value, ci_low, ci_high, n, reason...) of ``subject`` ("project",
        "rater:ID", "model:ID"); None when the snapshot has none."""
        kind, _, ref = subject.partition(":")
        if kind == "project":
            return self.result.get("measures", {}).get(metric)  # type: ignore[no-any-return]
        group = {"rater": "raters", "model": "models"}.get(kind)
        if group is None:
            raise ValueError(f"subject must be project, rater:ID or model:ID; got {subject!r}")
        return self.result.get(group, {}).get(ref, {}).get(metric)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class PlannedItem:
    item: str
    first_labeled_at: datetime
    reason: str


@dataclass(frozen=True)
class RepeatPlan:
    """Items ``rater`` should see again (recorded as planned), and her counts: ``needed``
    repeated items for the wanted precision, ``have`` now, ``outstanding`` open repeats."""

    rater: str
    items: tuple[PlannedItem, ...]
    needed: int
    have: int
    outstanding: int
    request_id: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: str | None) -> RepeatPlan:
        items = tuple(
            PlannedItem(i["item"], at(i["first_labeled_at"]), i["reason"]) for i in data["items"]
        )
        return cls(
            data["rater"], items, data["needed"], data["have"], data["outstanding"], request_id
        )


@dataclass(frozen=True)
class RaterRepeats:
    """One rater's hidden repeats: planned, fulfilled, expired, outstanding; repeated items
    she ``have`` and ``needed`` for the wanted precision of her ``self_agreement``."""

    rater: str
    planned: int
    fulfilled: int
    expired: int
    outstanding: int
    have: int
    needed: int
    self_agreement: float | None


@dataclass(frozen=True)
class Import:
    """One import (a file or an API batch); reverted ones carry ``reverted_at``."""

    id: int
    source: str
    content_hash: str | None
    rows: int
    inserted: int
    duplicates: int
    created_by: str
    created_at: datetime
    reverted_at: datetime | None
    reverted_labels: int | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Import:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**{**known, "created_at": at(data["created_at"]),
                      "reverted_at": when(data["reverted_at"])})  # fmt: skip


@dataclass(frozen=True)
class Revert:
    """A revert done: labels ``deleted``; ``repeats``: what became of the planned repeats
    they had fulfilled (reopened, expired, refulfilled)."""

    import_id: int
    deleted: int
    reverted_at: datetime
    repeats: Mapping[str, int] = field(default_factory=dict)
