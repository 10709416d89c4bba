"""Plain values shared by pure code and the layers above it: enums, project settings and the
columnar label arrays that storage hands to the statistics.

Nothing here touches a database, a broker or the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum

import numpy as np

# Every time the service accepts (labeled_at, silences, at/since/until, imports) lies in
# [EARLIEST_TIME, LATEST_TIME) once its offset is applied. Outside, a time may not survive the
# round trip through storage (year 1 at +14:00 is before datetime.min in UTC, year 9999 at
# -14:00 after datetime.max) and poisons every later read of it; nothing real lies there.
EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_TIME = datetime(2100, 1, 1, tzinfo=UTC)
EARLIEST_MICROS = 0  # microseconds since the epoch, as stored (auditor.storage.db.UtcMicros)
LATEST_MICROS = (LATEST_TIME - EARLIEST_TIME) // timedelta(microseconds=1)
TIME_RANGE_TEXT = "times must lie in [1970-01-01, 2100-01-01) UTC"

# The patterns of names and scopes, one text each for every layer that checks them (the API
# schemas give them to pydantic; the alert rules, the alert services and the scopes compile
# them): a rule, channel or metric name; a rolling window ("7d", "30d": whole days); a scope.
NAME_PATTERN = r"^[a-z][a-z0-9_.:-]{0,99}$"
WINDOW_PATTERN = r"^([1-9][0-9]{0,3})d$"
SCOPE_PATTERN = r"^(cumulative|[1-9][0-9]{0,3}d)$"
NAME = re.compile(NAME_PATTERN)
WINDOW = re.compile(WINDOW_PATTERN)

# Resource caps of a project's settings: one recompute must not take hours of shared CPU.
# Operators may lower them (AUDITOR_MAX_BOOTSTRAP_RESAMPLES, AUDITOR_MAX_WINDOWS).
MAX_BOOTSTRAP_RESAMPLES = 10_000
MAX_WINDOWS = 5


EPOCH = EARLIEST_TIME
_ONE_MICROSECOND = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """Exact integer microseconds since the epoch of an aware datetime (the one conversion:
    storage's BIGINT times, ingestion, ticks and windows); a naive one is refused."""
    if moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: timestamps must carry a time zone")
    return (moment - EPOCH) // _ONE_MICROSECOND


def from_micros(micros: int) -> datetime:
    """The aware UTC datetime ``micros`` microseconds after the epoch."""
    return EPOCH + timedelta(microseconds=int(micros))


def time_out_of_range(moment: datetime) -> str | None:
    """Why ``moment`` (aware; naive is taken as UTC) is outside the accepted range, or None.
    Never raises: the difference of aware datetimes is exact whatever the offset."""
    if moment.utcoffset() is None:
        moment = moment.replace(tzinfo=UTC)
    micros = to_micros(moment)
    if EARLIEST_MICROS <= micros < LATEST_MICROS:
        return None
    return f"{moment.isoformat()} is out of range: {TIME_RANGE_TEXT}"


# The timestamps the service reads (labeled_at, silences, at/since/until): RFC 3339 date-time
# (``T``, ``t`` or a space between date and time; ``Z``, ``z`` or an offset ``+HH:MM``), and
# the same without a zone, read as UTC (real exports write it); the seconds may be left out
# (spreadsheets write ``2024-05-01 10:00``); RFC 3339's full-date alone is midnight UTC.
# Fractions: 1 to 6 digits
# (microseconds are the finest unit stored: a 7th is refused, not truncated). Nothing else:
# no week or ordinal dates, no basic format, no offsets with seconds, no space before the zone.
TIMESTAMP_FORMS = (
    "YYYY-MM-DDTHH:MM[:SS[.ffffff]](Z|+HH:MM|-HH:MM), or without a zone (UTC); "
    "a space may replace the T; YYYY-MM-DD alone is midnight UTC"
)
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))?)?",
    re.ASCII,
)


def parse_timestamp(text: str) -> datetime:
    """An aware datetime (no zone: UTC) of one of the accepted forms (``TIMESTAMP_FORMS``);
    ``ValueError`` saying what is wrong otherwise. Range is not checked
    (``time_out_of_range``)."""
    found = _TIMESTAMP.fullmatch(text)
    if found is None:
        raise ValueError(f"not an RFC 3339 (ISO 8601) timestamp ({TIMESTAMP_FORMS})")
    year, month, day, hour, minute, second, fraction, _z, sign, zone_h, zone_m = found.groups()
    if fraction is not None and len(fraction) > 6:
        raise ValueError(
            f"{len(fraction)} fractional digits: at most 6 (microseconds) are kept, "
            "so more are refused rather than cut"
        )
    zone = UTC
    if sign is not None:
        if int(zone_h) > 23 or int(zone_m) > 59:
            raise ValueError(f"offset {sign}{zone_h}:{zone_m} is not a valid offset")
        offset = timedelta(hours=int(zone_h), minutes=int(zone_m))
        zone = timezone(-offset if sign == "-" else offset)
    micros = int((fraction or "0").ljust(6, "0"))
    try:
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micros,
            zone,
        )
    except ValueError as error:
        raise ValueError(f"not a valid ISO 8601 date and time ({error})") from None


def windows_problem(days: tuple[int, ...] | list[int]) -> str | None:
    """Why rolling windows given by a person are refused, or None: at least one, each
    once (a repeated window is a mistake to name, not to drop silently)."""
    if not days:
        return "windows_days needs at least one window (e.g. 7)"
    repeated = sorted({d for d in days if list(days).count(d) > 1})
    if repeated:
        return f"windows_days repeats {', '.join(f'{d}d' for d in repeated)}: give each window once"
    return None


class RaterKind(StrEnum):
    """Humans form the fixed group; models are scored against it and never join it."""

    HUMAN = "human"
    MODEL = "model"


class CollapsePolicy(StrEnum):
    """Which label of a repeated (item, rater) the inter-rater measures see
    (docs/measures.md, "What the measures see")."""

    FIRST = "first"  # earliest labeled_at, ties by label id: the first look is the honest one
    LATEST = "latest"
    MODE = "mode"  # most frequent, ties to the earliest


class RhoMode(StrEnum):
    APPROXIMATE = "approximate"
    EXACT = "exact"


class RhoUnrated(StrEnum):
    """How rho treats raters that have no repeated presentations."""

    POOL = "pool"  # mean x and y over raters that have repeats
    EXCLUDE = "exclude"  # pairs with them do not count
    PERFECT = "perfect"  # x = 0


class RaterModel(StrEnum):
    """How a rater's chance of a random choice x is estimated (docs/measures.md, "Version 2")."""

    MOMENTS = "moments"  # closed form from self-agreement: Y = sqrt(self_kappa), x = 1 - Y
    MAX_ENTROPY = "max_entropy"  # the paper's per-item max-entropy solve, kept to reproduce it


class Scale(StrEnum):
    """How the categories relate (docs/measures.md, "Ordinal scales"): ``nominal`` (default)
    or ``ordinal``, where the declared order of the categories is their order on the scale."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"


class Weights(StrEnum):
    """Agreement weights of the weighted coefficients on an ordinal scale (1 on the diagonal):
    ``quadratic`` 1 - (c - k)^2 / (K - 1)^2 (default) or ``linear`` 1 - |c - k| / (K - 1)."""

    QUADRATIC = "quadratic"
    LINEAR = "linear"


class IntervalMethod(StrEnum):
    NONE = "none"
    JACKKNIFE = "jackknife"
    BOOTSTRAP = "bootstrap"


class SettingError(ValueError):
    """A setting out of its range; ``field`` names it. A ValueError, so callers that only
    want the message keep catching that; the services turn it into ``InvalidSetting`` (this
    module imports nothing of ours, so it cannot raise ``auditor.errors``' kinds)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ProjectSettings:
    """How a project's measures are computed; defaults are those of docs/measures.md."""

    collapse: CollapsePolicy = CollapsePolicy.FIRST
    rho_mode: RhoMode = RhoMode.APPROXIMATE
    rho_unrated: RhoUnrated = RhoUnrated.POOL
    rater_model: RaterModel = RaterModel.MOMENTS
    interval_method: IntervalMethod = IntervalMethod.JACKKNIFE
    interval_level: float = 0.95
    bootstrap_resamples: int = 1000
    windows_days: tuple[int, ...] = (7,)
    recompute_interval_seconds: int = 60
    scale: Scale = Scale.NOMINAL
    weights: Weights = Weights.QUADRATIC

    def __post_init__(self) -> None:
        if not 0.5 <= self.interval_level < 1.0:
            raise SettingError(
                "interval_level", f"interval_level must be in [0.5, 1), got {self.interval_level}"
            )
        if self.bootstrap_resamples < 10:
            raise SettingError("bootstrap_resamples", "bootstrap_resamples must be at least 10")
        if any(d <= 0 for d in self.windows_days):
            raise SettingError(
                "windows_days", f"windows_days must be positive, got {self.windows_days}"
            )
        if self.recompute_interval_seconds <= 0:
            raise SettingError(
                "recompute_interval_seconds", "recompute_interval_seconds must be positive"
            )


@dataclass(frozen=True)
class RepeatSettings:
    """How the repeat planner plans hidden repeated presentations (docs/repeats.md).

    share : at most this share of a rater's items is shown to them again.
    min_gap_hours, min_gap_items : the least gap between a look and its repeat, in time and in
        other items labeled by that rater since.
    half_width : the wanted half-width of the rater's self-agreement interval.
    open_days : a planned repeat not labeled within this many days expires.
    """

    share: float = 0.10
    min_gap_hours: float = 24.0
    min_gap_items: int = 20
    half_width: float = 0.10
    open_days: float = 7.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise SettingError("share", f"share must be in [0, 1], got {self.share}")
        if self.min_gap_hours < 0:
            raise SettingError(
                "min_gap_hours", f"min_gap_hours must not be negative, got {self.min_gap_hours}"
            )
        if self.min_gap_items < 0:
            raise SettingError(
                "min_gap_items", f"min_gap_items must not be negative, got {self.min_gap_items}"
            )
        if not 0.0 < self.half_width < 0.5:
            raise SettingError(
                "half_width", f"half_width must be in (0, 0.5), got {self.half_width}"
            )
        if self.open_days <= 0:
            raise SettingError("open_days", f"open_days must be positive, got {self.open_days}")


@dataclass(frozen=True)
class LabelArrays:
    """One project's labels as parallel columns, the shape storage hands to the statistics.

    Rows are in label-id order (ingestion order), so a stable sort on ``order`` breaks ties
    by id. Indices are dense: ``item`` in [0, n_items), ``rater`` in [0, n_raters),
    ``category`` in [0, n_categories).

    item, rater, category : int64 arrays, shape (n_labels,)
    order : int64 array, shape (n_labels,); labeled_at in microseconds since the epoch
    rater_is_model : bool array, shape (n_raters,); True for raters of kind ``model``
    rater_names, item_names, category_names : external ids, for rendering only
    """

    item: np.ndarray
    rater: np.ndarray
    category: np.ndarray
    order: np.ndarray
    rater_is_model: np.ndarray
    category_names: tuple[str, ...]
    rater_names: tuple[str, ...] = field(default=())
    item_names: tuple[str, ...] = field(default=())
    label_ids: np.ndarray | None = None

    @property
    def n_labels(self) -> int:
        return int(self.item.shape[0])

    @property
    def n_items(self) -> int:
        return len(self.item_names) if self.item_names else int(self.item.max(initial=-1)) + 1

    @property
    def n_raters(self) -> int:
        return int(self.rater_is_model.shape[0])

    @property
    def n_categories(self) -> int:
        return len(self.category_names)


# The one subject grammar (history, snapshots, alert rules and silences): a kind that names a
# whole (``project``; ``every_rater``, an alert selector) stands alone; one that names a member
# takes its id after a colon (``rater:ID``, ``model:ID``, ``pair:A|B``). Each caller says which
# kinds it takes and words its own refusal.
SUBJECT_KINDS_ALONE = frozenset({"project", "every_rater"})
SUBJECT_KINDS_WITH_ID = frozenset({"rater", "model", "pair"})


def split_subject(text: str, kinds: frozenset[str] | set[str]) -> tuple[str, str] | None:
    """(kind, id) of ``text`` when it is a subject of one of ``kinds``, else None."""
    kind, sep, subject_id = text.partition(":")
    if kind not in kinds:
        return None
    if kind in SUBJECT_KINDS_ALONE:
        return (kind, "") if not sep else None
    if kind in SUBJECT_KINDS_WITH_ID and sep and subject_id:
        return (kind, subject_id)
    return None
