"""Histories as pandas DataFrames, for notebooks. pandas is optional: imported here, when a
frame is asked for, never by ``import auditor.client``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas


class _Series(Protocol):
    """A ``History`` as this module reads it (records.py imports this module)."""

    @property
    def metric(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def points(self) -> Sequence[Any]: ...


COLUMNS = (
    "metric", "subject", "scope", "as_of", "computed_at", "value", "ci_low", "ci_high", "n",
    "reason", "snapshot_id",
)  # fmt: skip


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "a history as a DataFrame needs pandas (pip install pandas); "
            "History.records() gives the same rows as dicts"
        ) from None
    return pandas


def history_frame(histories: Iterable[_Series]) -> pandas.DataFrame:
    """One row per point of every history, in the order given: metric, subject, scope, as_of
    and computed_at (UTC), value, ci_low, ci_high (nullable floats: an undefined value is
    <NA> with its ``reason``, never 0 or NaN), n (nullable integer), reason, snapshot_id."""
    pd = _pandas()
    rows = [
        (h.metric, h.subject, p.scope, p.as_of, p.computed_at, p.value, p.ci_low, p.ci_high,
         p.n, p.reason, p.snapshot_id)
        for h in histories
        for p in h.points
    ]  # fmt: skip
    frame = pd.DataFrame.from_records(rows, columns=list(COLUMNS))
    for name in ("as_of", "computed_at"):
        frame[name] = pd.to_datetime(frame[name], utc=True)
    for name in ("value", "ci_low", "ci_high"):
        frame[name] = frame[name].astype("Float64")
    frame["n"] = frame["n"].astype("Int64")
    frame["snapshot_id"] = frame["snapshot_id"].astype("int64")
    return frame
