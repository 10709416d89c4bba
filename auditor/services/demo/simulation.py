"""The demo: an ongoing labeling project over simulated days, recomputed on a schedule.

The story (deterministic for a seed):
- four categories with unequal prevalence; every day new items arrive and each is labeled by
  four of ten human raters (reliabilities from 0.95 down to 0.70) and by one model rater;
- a rater errs by a random choice drawn from the prevalence: the rater model of the
  self-agreement paper, d(c) = x P(c) + y_c;
- hidden repeated presentations, as in that paper, drawn from the repeat planner
  (``auditor.services.repeats.planner``): each morning every human asks it for the items to see
  again (15% of her work, labeled at least 12 hours and 20 items earlier, within the last
  three days), and they come mixed among her new work; her labels fulfil the plan;
- rater ``r07`` is among the best until half-way, then degrades sharply; after
  ``DEGRADED_DAYS`` days she is retrained and labels as well as before (alerts fire on the
  drop and resolve after the recovery; see ``auditor.services.alert_demo``).

Labels arrive in batches every two simulated hours through ``ingest_labels``; after each batch
the scheduler runs (``recompute_due_projects`` with the simulated clock), so the project gets a
snapshot per recompute tick (six simulated hours) whenever it is dirty, in both scopes:
cumulative and the last seven days. The printed history shows r07's self-agreement falling in
the 7-day window while the cumulative view lags behind.

The simulated clock ends now (``DemoConfig.end``, default the current hour): the last
simulated day is the 24 hours before the demo runs, so ``auditor run`` and ``auditor serve``
on the demo database continue the story on the wall clock (the 7-day window still holds the
last week's labels) instead of finding every window empty.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.history import HistoryPoint, metric_history
from auditor.services.recompute.recompute import RecomputeResult, recompute_due_projects
from auditor.services.repeats.planner import plan_repeats, update_repeat_settings
from auditor.storage.unit_of_work import UnitOfWork

CATEGORIES = ("normal", "benign", "malignant", "artifact")
PREVALENCE = np.array([0.5, 0.25, 0.15, 0.10])
HUMAN_RELIABILITY = (0.95, 0.93, 0.91, 0.89, 0.87, 0.85, 0.92, 0.80, 0.75, 0.70)
DEGRADING_RATER = "r07"
DEGRADED_RELIABILITY = 0.35
DEGRADED_DAYS = 5  # then r07 is retrained (alerts: the episode resolves)
MODEL_RATER = "model-v1"
MODEL_RELIABILITY = 0.85
RATERS_PER_ITEM = 4
REPEAT_SHARE = 0.15
# Repeats come back within a few days, so both looks of most repeated items fall inside the
# 7-day window and the window's self-agreement rests on ~100 repeated items per rater.
REPEAT_LOOKBACK_DAYS = 3
# The planner runs as the working day starts; a 12-hour gap lets yesterday's items come back.
PLAN_HOUR = 8
REPEAT_MIN_GAP_HOURS = 12.0
BATCH_HOURS = 2
RECOMPUTE_INTERVAL_SECONDS = 6 * 3600


@dataclass(frozen=True)
class DemoConfig:
    seed: int = 7
    days: int = 24
    items_per_day: int = 240
    slug: str = "demo"
    # When the simulated clock stops (an aware time); None: the current hour, so the story
    # ends as the command runs. Pin it for a run that is the same whenever it happens.
    end: datetime | None = None


def demo_start(config: DemoConfig, now: datetime | None = None) -> datetime:
    """The first simulated instant: ``config.days`` days before the end (``config.end``, or
    ``now`` floored to the hour; the hour keeps printed times round and a rerun within it
    identical)."""
    end = config.end if config.end is not None else (now or datetime.now(UTC))
    if end.tzinfo is None:
        raise ValueError(f"the demo's end needs a time zone, got {end.isoformat()}")
    end = end.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return end - timedelta(days=config.days)


@dataclass
class DemoRun:
    config: DemoConfig
    start: datetime
    labels: int = 0
    repeats: int = 0
    batches: int = 0
    recomputes: list[RecomputeResult] = field(default_factory=list)

    @property
    def snapshots(self) -> int:
        return sum(len(r.written) for r in self.recomputes)


def _rater_label(rng: np.random.Generator, truth: np.ndarray, reliability: float) -> np.ndarray:
    """With probability ``reliability`` the true category, else a random choice by prevalence."""
    random_choice = rng.choice(len(CATEGORIES), size=truth.shape[0], p=PREVALENCE)
    keep = rng.random(truth.shape[0]) < reliability
    return np.where(keep, truth, random_choice)


def _reliability(rater: str, day: int, days: int) -> float:
    if rater == MODEL_RATER:
        return MODEL_RELIABILITY
    if rater == DEGRADING_RATER and days // 2 <= day < days // 2 + DEGRADED_DAYS:
        return DEGRADED_RELIABILITY
    return HUMAN_RELIABILITY[int(rater[1:]) - 1]


Planner = Callable[[str, datetime], list[str]]


def simulate_day(
    rng: np.random.Generator,
    day: int,
    config: DemoConfig,
    planner: Planner,
    truth: dict,
    start: datetime,
) -> tuple[list[dict], int]:
    """One day's labels (new items and hidden repeats) in labeled_at order, and the number
    of repeated presentations among them. Day 0 begins at ``start``; ``planner(rater, now)``
    names the items the rater sees again that day."""
    humans = [f"r{i:02d}" for i in range(1, len(HUMAN_RELIABILITY) + 1)]
    day_start = start + timedelta(days=day)
    n = config.items_per_day
    item_ids = [f"d{day:02d}-{i:04d}" for i in range(n)]
    categories = rng.choice(len(CATEGORIES), size=n, p=PREVALENCE)
    truth.update(zip(item_ids, categories.tolist(), strict=True))
    rows: list[dict] = []
    repeated = 0

    def emit(rater: str, items: list[str], kind: str) -> None:
        true = np.array([truth[i] for i in items], dtype=np.int64)
        given = _rater_label(rng, true, _reliability(rater, day, config.days))
        # working hours (08:00-18:00 of the simulated day), spread at random: repeats are
        # mixed among new work
        seconds = np.sort(rng.uniform(8 * 3600, 18 * 3600, size=len(items)))
        order = rng.permutation(len(items))
        for k, position in enumerate(order):
            rows.append(
                {
                    "item": items[position],
                    "rater": rater,
                    "label": CATEGORIES[int(given[position])],
                    "session": f"{rater}-day{day:02d}",
                    "labeled_at": day_start + timedelta(seconds=float(seconds[k])),
                    "rater_kind": kind,
                }
            )

    chosen = np.argsort(rng.random((n, len(humans))), axis=1)[:, :RATERS_PER_ITEM]
    for h, rater in enumerate(humans):
        mine = [item_ids[i] for i in np.flatnonzero((chosen == h).any(axis=1))]
        repeats = planner(rater, day_start + timedelta(hours=PLAN_HOUR)) if day else []
        emit(rater, mine + repeats, "human")
        repeated += len(repeats)
    emit(MODEL_RATER, item_ids, "model")
    rows.sort(key=lambda row: row["labeled_at"])
    return rows, repeated


def prepare_repeats(uow: UnitOfWork, config: DemoConfig) -> Planner:
    """Set the demo project's repeat planner (15% of each rater's work, a 12-hour gap) and
    return ``planner(rater, now)``: the items the planner proposes, first labeled within the
    last ``REPEAT_LOOKBACK_DAYS`` days (both looks then fall in the 7-day window)."""
    update_repeat_settings(uow, config.slug, share=REPEAT_SHARE, min_gap_hours=REPEAT_MIN_GAP_HOURS)

    def planner(rater: str, now: datetime) -> list[str]:
        # seeded per rater and day, so the run stays deterministic for a seed
        seed = zlib.crc32(f"{config.seed}:{rater}:{now.isoformat()}".encode())
        since = now - timedelta(days=REPEAT_LOOKBACK_DAYS)
        answer = plan_repeats(uow, config.slug, rater, 1000, now=now, since=since, seed=seed)
        return [entry["item"] for entry in answer["items"]]

    return planner


def run_demo(
    uow: UnitOfWork,
    config: DemoConfig,
    progress: Callable[[int, DemoRun], None] | None = None,
    setup: Callable[[UnitOfWork, str], object] | None = None,
) -> DemoRun:
    """Create the project, then ingest and recompute day by day on the simulated clock.
    ``setup(uow, slug)`` runs once the project exists (the CLI installs alert rules there)."""
    create_project(
        uow,
        config.slug,
        list(CATEGORIES),
        name="Demo: lesion triage",
        windows_days=(7,),
        recompute_interval_seconds=RECOMPUTE_INTERVAL_SECONDS,
    )
    planner = prepare_repeats(uow, config)
    if setup is not None:
        setup(uow, config.slug)
    rng = np.random.default_rng(config.seed)
    run = DemoRun(config, demo_start(config))
    truth: dict[str, int] = {}
    for day in range(config.days):
        rows, repeated = simulate_day(rng, day, config, planner, truth, run.start)
        run.repeats += repeated
        day_start = run.start + timedelta(days=day)
        for slot in range(24 // BATCH_HOURS):
            slot_end = day_start + timedelta(hours=BATCH_HOURS * (slot + 1))
            batch = [
                r
                for r in rows
                if slot_end - timedelta(hours=BATCH_HOURS) <= r["labeled_at"] < slot_end
            ]
            if batch:
                ingest_labels(uow, config.slug, batch, received_at=slot_end)
                run.labels += len(batch)
                run.batches += 1
            # The scheduler's scan and recomputes, on the simulated clock. Alert evaluation
            # plugs in through auditor.services.recompute.recompute.add_snapshot_hook and runs
            # inside each snapshot's transaction, so the demo gets it without change.
            run.recomputes.extend(r for r in recompute_due_projects(uow, slot_end) if r.written)
        if progress is not None:
            progress(day, run)
    return run


@dataclass(frozen=True)
class DayRow:
    day: int
    values: dict[str, float | None]


HISTORY_COLUMNS: tuple[tuple[str, str, str | None, str], ...] = (
    ("kappa_S cum", "kappa_s", None, "cumulative"),
    ("kappa_S 7d", "kappa_s", None, "7d"),
    ("rho cum", "rho", None, "cumulative"),
    ("rho 7d", "rho", None, "7d"),
    (f"SA {DEGRADING_RATER} cum", "self_agreement", f"rater:{DEGRADING_RATER}", "cumulative"),
    (f"SA {DEGRADING_RATER} 7d", "self_agreement", f"rater:{DEGRADING_RATER}", "7d"),
    (f"S {DEGRADING_RATER} 7d", "s_vs_group", f"rater:{DEGRADING_RATER}", "7d"),
    (f"S {MODEL_RATER} 7d", "s", f"model:{MODEL_RATER}", "7d"),
)


def daily_history(uow: UnitOfWork, config: DemoConfig, start: datetime) -> list[DayRow]:
    """For each simulated day (day 0 begins at ``start``), the last value of each history
    column measured that day, read back through the same history query the CLI uses."""
    series: dict[str, list[HistoryPoint]] = {}
    for title, metric, subject, scope in HISTORY_COLUMNS:
        series[title] = metric_history(uow, config.slug, metric, subject=subject, scopes=[scope])
    rows = []
    for day in range(config.days):
        end = start + timedelta(days=day + 1)
        values: dict[str, float | None] = {}
        for title, points in series.items():
            before = [p for p in points if p.as_of <= end]
            values[title] = before[-1].value if before else None
        rows.append(DayRow(day + 1, values))
    return rows
