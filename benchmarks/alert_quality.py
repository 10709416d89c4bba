"""Alert quality of the default rules, measured as a monitoring procedure (issue 21).

    nice -n 10 .venv/bin/python benchmarks/alert_quality.py [--seeds 10] [--rules after|before]
        [--scenarios stable,0.35,0.6,0.75]

A faster equivalent of the demo's simulation (``auditor.services.demo.simulation``: the same
raters, reliabilities, prevalence, four raters per item, 240 items a day, 15% hidden repeats
of the last three days' items, labels between 08:00 and 18:00 in two-hour batches), without
the database: the labels feed the real rule evaluation directly, ``judge()`` and ``step()``
of ``auditor.alerting`` on the rules of ``default_rules()``, with

* kappa_S and rho (cumulative) from ``auditor.stats.compute_measures`` on the labels so far,
  read through the same points as a snapshot (``points_from_stats_dict``): every tick of the
  first 7 days, then once a day at 18:00 (their start is what the targets are about);
* each rater's 7-day self-agreement from her repeat pairs, with its n, and the value 7 days
  before (the drop rule);
* each rater's change detector (``auditor.alerting.change``) fed batch by batch, judged at
  every tick;
* ticks (snapshots) at 12:00, 18:00 and 24:00 of each simulated day.

Scenarios: ``stable`` (60 days, nobody degrades) and r07 dropping to reliability 0.35, 0.6
or 0.75 from day 20 for 10 days, then back (retrained) for ``--after-days`` (6: 36 days in
all). Reported: false episodes per rater-month
(episodes of any rater in ``stable``, of raters other than r07 in the drops) and per
project-month for each rule, project episodes in the first 7 days, and for each drop the
detection of r07 per rule (an episode starting after her first degraded label and before the
drop ends) and its delay in hours from her first degraded label, and the hours from her first
label after the drop (retrained) to the end of her episode open then. ``--rules before`` measures
the rules as they were before issue 21 (no margin, min_n 10, drop on point values held 12 h).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auditor.alerting import (
    AlertState,
    ConditionKind,
    EventKind,
    Observation,
    Rule,
    Subject,
    SubjectKind,
    default_rules,
    judge,
    step,
)
from auditor.alerting.change import ChangeSettings, Memory, RaterDetector, alarm, feed, restart
from auditor.alerting.defaults import EVIDENCE_POINT
from auditor.domain import LabelArrays, ProjectSettings
from auditor.services.demo.simulation import (
    HUMAN_RELIABILITY,
    PREVALENCE,
    RATERS_PER_ITEM,
    REPEAT_LOOKBACK_DAYS,
    REPEAT_SHARE,
)
from auditor.snapshots.points import points_from_stats_dict
from auditor.stats.export import measure_set_to_dict
from auditor.stats.measures import compute_measures

HUMANS = tuple(f"r{i:02d}" for i in range(1, len(HUMAN_RELIABILITY) + 1))
TARGET = "r07"
DROP_START_DAY, DROP_DAYS = 20, 10
TICK_HOURS = (12, 18, 24)
START = datetime(2026, 1, 5, tzinfo=UTC)
CATEGORY_NAMES = ("normal", "benign", "malignant", "artifact")


def before_rules(project: str) -> tuple[Rule, ...]:
    """The default rules as they were before issue 21."""
    out = []
    for rule in default_rules(project):
        c = rule.condition
        if c.kind is ConditionKind.NOT_CONFIDENTLY_ABOVE:
            out.append(replace(rule, min_n=10, condition=replace(c, margin=None)))
        elif c.kind is ConditionKind.DROP:
            out.append(replace(rule, for_=timedelta(hours=12), condition=replace(c, z=None)))
    return tuple(out)


def after_rules(project: str) -> tuple[Rule, ...]:
    # repeat_coverage is about planning, not reliability: it is not judged here
    return tuple(r for r in default_rules(project) if r.metric != "repeat_coverage")


@dataclass
class Outcome:
    episodes: list[tuple[str, str, datetime]] = field(default_factory=list)  # rule, subject, t
    resolved: list[tuple[str, str, datetime]] = field(default_factory=list)  # rule, subject, t
    first_bad: datetime | None = None
    first_back: datetime | None = None  # her first label after the drop (retrained)
    days: int = 0


def _short(rule_id: str) -> str:
    return rule_id.rsplit(":", 1)[-1]


VERBOSE = False


def simulate(seed: int, days: int, drop: float | None, rules: tuple[Rule, ...]) -> Outcome:
    rng = np.random.default_rng(seed)
    outcome = Outcome(days=days)
    k = len(PREVALENCE)
    truth: list[int] = []
    labels: list[tuple[int, int, int, float]] = []  # item, rater, category, hours since start
    mine_by_day: dict[tuple[int, int], list[int]] = {}
    repeated: dict[int, set[int]] = defaultdict(set)
    first_look: dict[tuple[int, int], tuple[int, float]] = {}
    repeat_pairs: dict[int, list[tuple[float, float, int]]] = defaultdict(list)  # t1, t2, agree
    sa_history: dict[int, list[tuple[float, float | None, int]]] = defaultdict(list)
    # each rater_change rule (one per --limits value) has its own detectors and stream
    changes: dict[str, tuple[ChangeSettings, dict[str, RaterDetector], Memory]] = {
        r.id: (ChangeSettings(limit=float(r.condition.threshold or 0)), {}, {})
        for r in rules
        if r.condition.kind is ConditionKind.RATER_CHANGE
    }
    detectors_of: dict[str, dict[str, RaterDetector]] = {i: c[1] for i, c in changes.items()}
    states: dict[tuple[str, str], AlertState] = {}

    def reliability(rater: int, day: int) -> float:
        degraded = DROP_START_DAY <= day < DROP_START_DAY + DROP_DAYS
        if drop is not None and HUMANS[rater] == TARGET and degraded:
            return drop
        return HUMAN_RELIABILITY[rater]

    def run(rule: Rule, subject: Subject, obs: Observation, now: datetime) -> None:
        key = (rule.id, subject.key)
        state = states.get(key) or AlertState(rule.id, subject)
        transition = step(state, judge(obs, rule), rule, now)
        states[key] = transition.state
        for event in transition.events:
            if event.kind is EventKind.FIRING:
                outcome.episodes.append((_short(rule.id), subject.key, now))
                if rule.id in changes:
                    alarm(detectors_of[rule.id][subject.ref])
            if event.kind is EventKind.RESOLVED:
                outcome.resolved.append((_short(rule.id), subject.key, now))
                if rule.id in changes:
                    restart(detectors_of[rule.id][subject.ref])

    def project_points(now_hours: float) -> dict[str, tuple]:
        arr = np.asarray(labels, dtype=float)
        item = arr[:, 0].astype(np.int64)
        _, dense = np.unique(item, return_inverse=True)
        la = LabelArrays(
            item=dense.astype(np.int64),
            rater=arr[:, 1].astype(np.int64),
            category=arr[:, 2].astype(np.int64),
            order=(arr[:, 3] * 3.6e9).astype(np.int64),
            rater_is_model=np.zeros(len(HUMANS), dtype=bool),
            category_names=CATEGORY_NAMES,
            rater_names=HUMANS,
        )
        ms = compute_measures(la, ProjectSettings(), seed=seed)
        points = points_from_stats_dict(measure_set_to_dict(ms))
        return {
            p.metric: (p.value, p.ci_low, p.ci_high, p.n or 0)
            for p in points
            if p.subject_kind == "project"
        }

    for day in range(days):
        n_items = 240
        base = len(truth)
        cats = rng.choice(k, size=n_items, p=PREVALENCE)
        truth.extend(cats.tolist())
        chosen = np.argsort(rng.random((n_items, len(HUMANS))), axis=1)[:, :RATERS_PER_ITEM]
        todays: list[tuple[float, int, int]] = []  # hour, item, rater
        for h in range(len(HUMANS)):
            mine = [base + int(i) for i in np.flatnonzero((chosen == h).any(axis=1))]
            mine_by_day[(h, day)] = mine
            pool = [
                i
                for d in range(max(0, day - REPEAT_LOOKBACK_DAYS), day)
                for i in mine_by_day[(h, d)]
                if i not in repeated[h]
            ]
            want = min(len(pool), round(REPEAT_SHARE * len(mine)))
            again = [pool[int(j)] for j in rng.choice(len(pool), size=want, replace=False)]
            repeated[h].update(again)
            for i in mine + again:
                todays.append((day * 24 + rng.uniform(8, 18), i, h))
        todays.sort()
        for hour, i, h in todays:
            rel = reliability(h, day)
            given = truth[i] if rng.random() < rel else int(rng.choice(k, p=PREVALENCE))
            labels.append((i, h, given, hour))
            if drop is not None and HUMANS[h] == TARGET and rel == drop:
                when = START + timedelta(hours=hour)
                if outcome.first_bad is None or when < outcome.first_bad:
                    outcome.first_bad = when
            back = drop is not None and day >= DROP_START_DAY + DROP_DAYS
            if back and HUMANS[h] == TARGET and outcome.first_back is None:
                outcome.first_back = START + timedelta(hours=hour)
            if (h, i) in first_look:
                cat0, t0 = first_look[(h, i)]
                repeat_pairs[h].append((t0, hour, int(cat0 == given)))
            else:
                first_look[(h, i)] = (given, hour)
        # batches of two hours, then the ticks
        fed = 0
        day_labels = labels[len(labels) - len(todays) :]
        for slot_end in range(2, 25, 2):
            end = day * 24 + slot_end
            batch = []
            while fed < len(day_labels) and day_labels[fed][3] < end:
                batch.append((len(labels) - len(todays) + fed, day_labels[fed]))
                fed += 1
            if batch:
                # the label's index is its sequence, as the label id is in service
                rows = [(str(i), HUMANS[h], str(c), seq) for seq, (i, h, c, _) in batch]
                for settings, detectors, latest in changes.values():
                    feed(detectors, rows, latest, settings)
            if slot_end not in TICK_HOURS:
                continue
            now = START + timedelta(hours=end)
            tick(rules, end, now, run, changes, repeat_pairs, sa_history)
            project_rules = [r for r in rules if r.subject.kind is SubjectKind.PROJECT]
            if project_rules and labels and (day < 7 or slot_end == 18):
                values = project_points(end)
                for rule in project_rules:
                    v, lo, hi, n = values.get(rule.metric, (None, None, None, 0))
                    gate = EVIDENCE_POINT.get(rule.metric)
                    if gate is not None and rule.condition.margin is not None:
                        n = values.get(gate, (None, None, None, 0))[3]
                    run(rule, Subject(SubjectKind.PROJECT), Observation(v, lo, hi, n=n), now)
    return outcome


def tick(rules, end, now, run, changes, repeat_pairs, sa_history) -> None:
    for rule in rules:
        if rule.subject.kind is SubjectKind.PROJECT:
            continue
        for h, rater in enumerate(HUMANS):
            subject = Subject(SubjectKind.RATER, rater)
            if rule.condition.kind is ConditionKind.RATER_CHANGE:
                settings, detectors, _ = changes[rule.id]
                d = detectors.get(rater)
                value = d.statistic if d is not None and d.ready(settings) else None
                obs = Observation(value, n=d.tested, reason="baseline still being learned")
                run(rule, subject, obs, now)
            elif rule.condition.kind is ConditionKind.DROP:
                pairs = repeat_pairs[h]
                inside = [a for t0, t1, a in pairs if t0 >= end - 168 and t1 <= end]
                n = len(inside)
                value = (sum(inside) / n) if n else None
                hist = sa_history[h]
                hist.append((end, value, n))
                back = [x for x in hist if x[0] <= end - 168]
                lb = back[-1] if back else (None, None, None)
                # the service before issue 21 read no n a lookback ago (min_n: this week only)
                lb_n = lb[2] if rule.condition.z is not None else None
                obs = Observation(value, n=n, lookback_value=lb[1], lookback_n=lb_n)
                run(rule, subject, obs, now)


def _resolve_after_retraining(outcomes: list[Outcome], rule: str) -> str:
    """Hours from r07's first label after the drop (she is retrained) to the end of her
    episode of ``rule`` open at that time; runs whose episode is still open at the end count
    as open (their time is at least the days left)."""
    hours, still_open = [], 0
    subject = f"rater:{TARGET}"
    for o in outcomes:
        if o.first_back is None:
            continue
        starts = [t for r, s, t in o.episodes if r == rule and s == subject and t < o.first_back]
        if not starts:
            continue
        ends = [t for r, s, t in o.resolved if r == rule and s == subject and t > max(starts)]
        if ends:
            hours.append(max(0.0, (min(ends) - o.first_back).total_seconds() / 3600))
        else:
            still_open += 1
    if not hours and not still_open:
        return ""
    med = f"{statistics.median(hours):.0f} h" if hours else "-"
    top = f", max {max(hours):.0f} h" if hours else ""
    return (
        f"  resolved after retraining: {len(hours)} (median {med}{top}), "
        f"still open at the end {still_open}"
    )


def summarise(name: str, outcomes: list[Outcome], rule_names: list[str], drop: float | None):
    rater_months = sum(o.days for o in outcomes) / 30.0 * (len(HUMANS) - (drop is not None))
    project_months = sum(o.days for o in outcomes) / 30.0
    print(f"\n== {name}: {len(outcomes)} seeds, {outcomes[0].days} days each")
    for rule in rule_names:
        false_rater = false_project = start_project = 0
        delays = []
        for o in outcomes:
            caught = None
            for r, subject, t in o.episodes:
                if r != rule:
                    continue
                if subject == "project":
                    false_project += 1
                    start_project += (t - START) < timedelta(days=7)
                elif drop is not None and subject == f"rater:{TARGET}":
                    assert o.first_bad is not None
                    end = START + timedelta(days=DROP_START_DAY + DROP_DAYS)
                    if o.first_bad <= t <= end and caught is None:
                        caught = (t - o.first_bad).total_seconds() / 3600
                else:
                    false_rater += 1
            if caught is not None:
                delays.append(caught)
        line = (
            f"  {rule:<22} false/rater-month {false_rater / rater_months:.3f}"
            f"  false/project-month {false_project / project_months:.3f}"
            f"  project episodes in first 7 days {start_project}"
        )
        if drop is not None:
            med = f"{statistics.median(delays):.0f} h" if delays else "-"
            line += f"  caught {len(delays)}/{len(outcomes)} median delay {med}"
            if delays:
                line += f" (max {max(delays):.0f} h)"
            within = [sum(d <= limit for d in delays) for limit in (24, 72, 168)]
            line += " within 24 h / 72 h / 7 d: " + " / ".join(map(str, within))
            line += _resolve_after_retraining(outcomes, rule)
        print(line)
    total = sum(
        1
        for o in outcomes
        for r, s, _ in o.episodes
        if s != "project" and not (drop is not None and s == f"rater:{TARGET}")
    )
    print(f"  all rater rules: false/rater-month {total / rater_months:.3f}")
    if VERBOSE:
        for seed, o in enumerate(outcomes):
            for r, subject, t in o.episodes:
                day = (t - START).total_seconds() / 86400
                print(f"    seed #{seed} {r} {subject} day {day:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--rules", choices=("after", "before"), default="after")
    parser.add_argument("--scenarios", default="stable,0.35,0.6,0.75")
    parser.add_argument("--stable-days", type=int, default=60)
    parser.add_argument(
        "--after-days", type=int, default=6, help="days simulated after r07's drop ends"
    )
    parser.add_argument(
        "--limits", default="", help="rater_change limits h to try beside the default, e.g. 10,14"
    )
    parser.add_argument("--verbose", action="store_true", help="list every episode")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    rules = after_rules("p") if args.rules == "after" else before_rules("p")
    for text in filter(None, args.limits.split(",")):
        change = next(r for r in after_rules("p") if r.condition.kind is ConditionKind.RATER_CHANGE)
        condition = replace(change.condition, threshold=float(text))
        rules += (replace(change, id=f"{change.id}_h{text}", condition=condition),)
    names = [_short(r.id) for r in rules]
    started = time.perf_counter()
    print(f"rules: {args.rules} ({', '.join(names)}); load average {os.getloadavg()}")
    for scenario in args.scenarios.split(","):
        drop = None if scenario == "stable" else float(scenario)
        days = args.stable_days if drop is None else DROP_START_DAY + DROP_DAYS + args.after_days
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        outcomes = [simulate(seed, days, drop, rules) for seed in seeds]
        summarise(f"{scenario} (r07 -> {drop})" if drop else scenario, outcomes, names, drop)
    print(
        f"\n{time.perf_counter() - started:.0f} s; load average {os.getloadavg()}",
    )


if __name__ == "__main__":
    main()
