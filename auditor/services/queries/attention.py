"""Who needs attention in a project, and why: the first section of the project page and of the
report (issue 27).

A rater (or model) is listed when an alert on her fires or is pending, when an alert on her
resolved recently, when her recent reliability, self-agreement or agreement with the group
fell, when she grades strongly above or below the others (ordinal scales), or when she is short
of the repeats her self-agreement needs. Each concern has a weight; a subject's weight is the
sum of hers, and the list is ordered by it (then naturally by name). Each subject gets one
sentence in plain words: what changed, since when, and how sure the numbers are.

Pure functions over the values the dashboard read already reads (the latest snapshots, the
window snapshot a week before, the alert states and transitions); the subjects' small
multiples are read by ``auditor.services.queries.dashboard`` for the listed ones only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

# How far back a resolved alert episode still counts ("recent"): a lead reading on Monday
# wants last week's episode even though it is over.
RECENT = timedelta(days=14)
# Metrics whose fall means a rater got worse, with the smallest fall worth a line, and their
# plain names.
DROP_METRICS: tuple[tuple[str, float, str], ...] = (
    ("reliability", 0.10, "reliability"),
    ("self_agreement", 0.08, "self-agreement"),
    ("s_vs_group", 0.10, "agreement with the group"),
)
# The window series a fall-and-recovery (a dip) is looked for in: self-agreement's is said
# through reliability. A page reads these for every rater, no more.
DIP_METRICS: tuple[str, ...] = tuple(m for m, _, _ in DROP_METRICS if m != "self_agreement")
# A week-before window value resting on fewer items is too noisy to compare with.
MIN_BASELINE_N = 20
# A grade bias (mean grades above or below the others) this large, with an interval that
# excludes 0, is worth a line.
STRONG_GRADE_BIAS = 0.3
# Rules on these metrics say "too few repeats", not "got worse": weighed as such.
COVERAGE_METRICS = frozenset({"repeat_coverage"})
# The largest number of subjects listed (the rest are counted).
MAX_LISTED = 8

WEIGHT_FIRING = 100.0
WEIGHT_PENDING = 60.0
WEIGHT_RECENT = 35.0
WEIGHT_FEW_REPEATS = 5.0


@dataclass(frozen=True)
class Episode:
    """One span of an alert lane in a non-ok state (``end`` None: still so)."""

    rule: str
    state: str  # firing | pending
    start: datetime
    end: datetime | None


@dataclass(frozen=True)
class Concern:
    kind: str  # alert | recent_alert | drop | grade_bias | few_repeats
    weight: float
    text: str
    since: datetime | None = None
    metric: str | None = None


@dataclass(frozen=True)
class Attention:
    """One subject who needs attention: her concerns (heaviest first), one sentence, and the
    alert episodes to shade on her small multiples."""

    subject: str
    kind: str  # human | model
    weight: float
    concerns: tuple[Concern, ...]
    episodes: tuple[Episode, ...] = ()
    charts: tuple[Any, ...] = field(default_factory=tuple)  # MetricHistory, filled by the read

    @property
    def body(self) -> str:
        """What is wrong, in plain words, heaviest first: one sentence."""
        text = "; ".join(c.text for c in self.concerns)
        return text[:1].upper() + text[1:] + "."

    @property
    def sentence(self) -> str:
        return f"{self.subject}: {self.body}"

    @property
    def minor(self) -> bool:
        """Only short of repeats: listed in one line, without charts."""
        return all(c.kind == "few_repeats" for c in self.concerns)

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.kind for c in self.concerns))


def natural_key(name: str) -> tuple[Any, ...]:
    """``r2`` before ``r10``: digit runs compare as numbers."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in re.split(r"(\d+)", name)
        if part
    )


def _when(moment: datetime | None) -> str:
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def _value(measure: Mapping[str, Any] | None) -> float | None:
    if not measure:
        return None
    value = measure.get("value")
    return None if value is None else float(value)


def _rule_name(rule: str) -> str:
    name = rule.split(":", 1)[-1]
    return name.removeprefix("default:").replace("_", " ")


def episodes_of(changes: Iterable[Any], until: datetime) -> dict[tuple[str, str], list[Episode]]:
    """(rule, subject key) -> its firing and pending spans, oldest first, from the lane's
    transitions (``AlertChange``s)."""
    lanes: dict[tuple[str, str], list[Any]] = {}
    for change in sorted(changes, key=lambda c: c.at):
        lanes.setdefault((change.rule, change.subject), []).append(change)
    found: dict[tuple[str, str], list[Episode]] = {}
    for lane, rows in lanes.items():
        for current, following in zip(rows, [*rows[1:], None], strict=True):
            if current.to_state not in ("firing", "pending"):
                continue
            end = following.at if following is not None else None
            found.setdefault(lane, []).append(
                Episode(lane[0], current.to_state, current.at, end if end else None)
            )
    # A pending span followed by firing reads as one episode to a person: merge neighbours.
    merged: dict[tuple[str, str], list[Episode]] = {}
    for lane, spans in found.items():
        out: list[Episode] = []
        for span in spans:
            if out and out[-1].end == span.start:
                state = "firing" if "firing" in (out[-1].state, span.state) else span.state
                out[-1] = Episode(span.rule, state, out[-1].start, span.end)
            else:
                out.append(span)
        merged[lane] = out
    return merged


def _subject_of(key: str) -> tuple[str, str] | None:
    """``rater:r07`` -> (human, r07); ``model:m`` -> (model, m); the project -> None."""
    kind, _, ref = key.partition(":")
    if not ref:
        return None
    return ("human" if kind == "rater" else "model", ref)


def _alert_concerns(
    states: Sequence[Any],
    episodes: Mapping[tuple[str, str], list[Episode]],
    rule_metrics: Mapping[str, str],
    as_of: datetime,
) -> dict[tuple[str, str], list[Concern]]:
    out: dict[tuple[str, str], list[Concern]] = {}
    for state in states:
        subject = _subject_of(state.subject)
        if subject is None:
            continue
        metric = rule_metrics.get(state.rule, "")
        if metric in COVERAGE_METRICS:
            continue  # weighed as "too few repeats" from the snapshot
        name = _rule_name(state.rule)
        spans = episodes.get((state.rule, state.subject), [])
        if state.state in ("firing", "pending"):
            since = spans[-1].start if spans else state.since
            value = "" if state.value is None else f" (value judged {state.value:.3f})"
            verb = "firing" if state.state == "firing" else "pending (not yet firing)"
            weight = WEIGHT_FIRING if state.state == "firing" else WEIGHT_PENDING
            text = f"the {name} alert is {verb} since {_when(since)}{value}"
            out.setdefault(subject, []).append(Concern("alert", weight, text, since, metric))
            continue
        ended = [s for s in spans if s.end is not None and as_of - s.end <= RECENT]
        if ended and any(s.state == "firing" for s in ended):
            last = ended[-1]
            days = (last.end - last.start).total_seconds() / 86400  # type: ignore[operator]
            text = (
                f"the {name} alert fired from {_when(last.start)} to {_when(last.end)} "
                f"({days:.1f} days) and has resolved"
            )
            out.setdefault(subject, []).append(
                Concern("recent_alert", WEIGHT_RECENT, text, last.start, metric)
            )
    return out


def _drop_concern(
    metric: str,
    threshold: float,
    label: str,
    now: Mapping[str, Any] | None,
    before: Mapping[str, Any] | None,
    cumulative: Mapping[str, Any] | None,
    window_title: str,
) -> Concern | None:
    """Her window value against the same window a week before (or, when that rests on too few
    items, her cumulative value): a fall of at least ``threshold``. "How sure": the window's
    interval lies wholly below the earlier value's (or the cumulative value), or not."""
    current = _value(now)
    if current is None:
        return None
    baseline, against, ceiling = _value(before), "a week before", (before or {}).get("ci_low")
    if baseline is None or ((before or {}).get("n") or 0) < MIN_BASELINE_N:
        baseline, against = _value(cumulative), "her cumulative value"
        ceiling = baseline
    if baseline is None or baseline - current < threshold:
        return None
    low, high, n = (now or {}).get("ci_low"), (now or {}).get("ci_high"), (now or {}).get("n")
    sure = high is not None and ceiling is not None and high < ceiling
    if not sure and baseline - current < 2 * threshold:
        return None  # a small fall within the noise is not worth a lead's time
    on = f" on {n} items" if n else ""
    interval = "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"
    how = (
        "clearly: the intervals do not overlap" if sure else "possibly noise: the intervals overlap"
    )
    text = (
        f"{label} fell to {current:.2f}{interval}{on} in the {window_title}, from "
        f"{baseline:.2f} ({against}); {how}"
    )
    drop = baseline - current
    weight = (30.0 + 150.0 * drop) if sure else (8.0 + 40.0 * drop)
    return Concern("drop", weight, text, None, metric)


def dated(item: Attention, window_scope: str) -> Attention:
    """Her drops with "since about ...": the first snapshot of the window series (her small
    multiple) from which the value stayed below the midpoint of the fall."""
    concerns = []
    for concern in item.concerns:
        if concern.kind != "drop" or concern.since is not None:
            concerns.append(concern)
            continue
        history = next((h for h in item.charts if h.metric == concern.metric), None)
        series = next(
            (s for s in (history.series if history else ()) if s.scope == window_scope), None
        )
        points = [p for p in (series.points if series else ()) if p.value is not None]
        since = None
        if len(points) > 1:
            top = max(p.value for p in points)
            line = (top + points[-1].value) / 2
            for p in reversed(points):
                if p.value >= line:
                    break
                since = p.as_of
        if since is None:
            concerns.append(concern)
            continue
        head, _, tail = concern.text.partition("; ")
        text = f"{head}, since about {_when(since)}; {tail}"
        concerns.append(Concern(concern.kind, concern.weight, text, since, concern.metric))
    return replace(item, concerns=tuple(concerns))


def _dip_concern(
    metric: str, threshold: float, label: str, points: Sequence[Any], window_title: str
) -> Concern | None:
    """A fall and a recovery within the recent window series (points with ``as_of``,
    ``value``, ``ci_low``, ``ci_high``): the lowest value at least ``threshold`` below the
    highest before it, and the latest value back up by at least half of that. A lead reading
    after the bad week still sees it (the drop itself is no longer in the numbers)."""
    defined = [p for p in points if p.value is not None]
    if len(defined) < 3:
        return None
    low_at = min(range(len(defined)), key=lambda i: defined[i].value)
    if low_at == 0:
        return None
    bottom = defined[low_at]
    peak = max(defined[:low_at], key=lambda p: p.value)
    dip = peak.value - bottom.value
    current = defined[-1]
    if dip < threshold or current.value - bottom.value < dip / 2:
        return None
    middle = peak.value - dip / 2
    start = next(
        (p.as_of for p in defined[: low_at + 1] if p.as_of > peak.as_of and p.value < middle),
        bottom.as_of,
    )
    end = next((p.as_of for p in defined[low_at:] if p.value > middle), current.as_of)
    sure = bottom.ci_high is not None and peak.ci_low is not None and bottom.ci_high < peak.ci_low
    if not sure:
        return None  # a past wobble within the noise is not worth a lead's time
    text = (
        f"{label} in the {window_title} fell from {peak.value:.2f} to {bottom.value:.2f} "
        f"[{bottom.ci_low:.2f}, {bottom.ci_high:.2f}] between {_when(start)} and "
        f"{_when(bottom.as_of)} (clearly: the intervals do not overlap) and is back at "
        f"{current.value:.2f} since {_when(end)}"
    )
    weight = 20.0 + 100.0 * dip
    return Concern("recovered", weight, text, start, metric)


def _bias_concern(measure: Mapping[str, Any] | None) -> Concern | None:
    value = _value(measure)
    if value is None or abs(value) < STRONG_GRADE_BIAS:
        return None
    low, high = (measure or {}).get("ci_low"), (measure or {}).get("ci_high")
    sure = low is not None and high is not None and (low > 0 or high < 0)
    if not sure:
        return None
    way = "above" if value > 0 else "below"
    text = (
        f"grades {abs(value):.2f} of a grade {way} the others on the same items "
        f"(interval [{low:.2f}, {high:.2f}] excludes 0)"
    )
    return Concern("grade_bias", 20.0 + 40.0 * abs(value), text, None, "grade_bias")


def _repeats_concern(measures: Mapping[str, Any]) -> Concern | None:
    needed = _value(measures.get("repeats_needed"))
    have = measures.get("n_repeated_items") or 0
    if needed is None or have >= needed:
        return None
    short = 1.0 - have / needed if needed else 0.0
    text = (
        f"too few repeats: {have} repeated item{'s' if have != 1 else ''} of the {needed:.0f} "
        "her self-agreement needs to be known well"
    )
    return Concern("few_repeats", WEIGHT_FEW_REPEATS * (1 + short), text, None, "repeat_coverage")


def needs_attention(
    *,
    latest: Mapping[str, Any] | None,
    window: Mapping[str, Any] | None,
    window_before: Mapping[str, Any] | None,
    window_title: str,
    states: Sequence[Any] = (),
    changes: Sequence[Any] = (),
    rule_metrics: Mapping[str, str] | None = None,
    as_of: datetime | None = None,
    recent: Mapping[tuple[str, str], Mapping[str, Sequence[Any]]] | None = None,
) -> list[Attention]:
    """The subjects who need attention, heaviest first (then naturally by name).

    ``latest``/``window``: the cumulative and window snapshots' stats JSON (``raters`` and
    ``models`` sections); ``window_before``: the window snapshot a week before the latest;
    ``states``/``changes``: ``AlertStateView``s and ``AlertChange``s; ``rule_metrics``:
    rule id -> its metric; ``recent``: (kind, subject) -> metric -> her window series over
    the last weeks, for a fall she has recovered from."""
    if not latest:
        return []
    moment = as_of or max([c.at for c in changes], default=None)
    if moment is None:
        moment = datetime.max.replace(tzinfo=None)
    episodes = episodes_of(changes, moment)
    found: dict[tuple[str, str], list[Concern]] = _alert_concerns(
        states, episodes, rule_metrics or {}, moment
    )
    for kind, section in (("human", "raters"), ("model", "models")):
        for subject, measures in (latest.get(section) or {}).items():
            concerns = found.setdefault((kind, subject), [])
            now = ((window or {}).get(section) or {}).get(subject) or {}
            before = ((window_before or {}).get(section) or {}).get(subject) or {}
            if window:
                drops = [
                    _drop_concern(
                        metric,
                        threshold,
                        label,
                        now.get(metric),
                        before.get(metric),
                        measures.get(metric),
                        window_title,
                    )
                    for metric, threshold, label in DROP_METRICS
                ]
                # Reliability is read from self-agreement: one signal, said once.
                if drops[0] is not None:
                    drops[1] = None
                concerns.extend(d for d in drops if d is not None)
                series = (recent or {}).get((kind, subject), {})
                for (metric, threshold, label), drop in zip(DROP_METRICS, drops, strict=True):
                    if drop is not None or metric not in DIP_METRICS:
                        continue  # a fall not yet recovered is said above; SA is reliability
                    dip = _dip_concern(
                        metric, threshold, label, series.get(metric, ()), window_title
                    )
                    if dip is not None:
                        concerns.append(dip)
            for extra in (_bias_concern(measures.get("grade_bias")), _repeats_concern(measures)):
                if extra is not None:
                    concerns.append(extra)
    listed = []
    for (kind, subject), concerns in found.items():
        if not concerns:
            continue
        ordered = tuple(sorted(concerns, key=lambda c: -c.weight))
        spans = tuple(
            span
            for (rule, key), lane in episodes.items()
            if _subject_of(key) == (kind, subject)
            and (rule_metrics or {}).get(rule) not in COVERAGE_METRICS
            for span in lane
        )
        listed.append(Attention(subject, kind, sum(c.weight for c in ordered), ordered, spans))
    listed.sort(key=lambda a: (-a.weight, natural_key(a.subject)))
    return listed


def concern_of(listed: Sequence[Attention]) -> dict[str, float]:
    """Subject -> weight, for sorting a table by concern."""
    return {a.subject: a.weight for a in listed}


def week_before(as_of: datetime) -> datetime:
    return as_of - timedelta(days=7)
