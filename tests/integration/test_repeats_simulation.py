"""A labeling run driven by the planner: four raters of known reliability label new items every
day and, mixed among them, the items the planner proposes; every active rater reaches the
needed number of repeated items, every planned repeat is fulfilled, and the self-agreement the
recompute then reports has the wanted precision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.services.repeats.planner import plan_repeats, repeat_status

CATEGORIES = ["a", "b", "c"]
PREVALENCE = np.array([0.5, 0.3, 0.2])
RELIABILITY = {"r1": 0.95, "r2": 0.85, "r3": 0.75, "r4": 0.65}
T0 = datetime(2024, 1, 1, tzinfo=UTC)
ITEMS_PER_DAY = 150


def test_a_planner_driven_run_reaches_the_needed_count_for_every_rater(uow) -> None:
    create_project(uow, "sim", CATEGORIES)
    rng = np.random.default_rng(11)
    truth: dict[str, int] = {}

    def look(rater: str, item: str) -> str:
        if rng.random() < RELIABILITY[rater]:
            return CATEGORIES[truth[item]]
        return CATEGORIES[rng.choice(3, p=PREVALENCE)]

    days = 0
    for day in range(20):
        days = day + 1
        start = T0 + timedelta(days=day, hours=8)
        rows = []
        for rater in RELIABILITY:
            fresh = [f"{rater}-{day}-{k}" for k in range(ITEMS_PER_DAY)]
            truth.update({i: int(rng.choice(3, p=PREVALENCE)) for i in fresh})
            repeats = []
            if day:
                answer = plan_repeats(uow, "sim", rater, 1000, now=start, seed=day)
                repeats = [entry["item"] for entry in answer["items"]]
            shown = fresh + repeats
            for position, k in enumerate(rng.permutation(len(shown))):  # repeats mixed in
                at = start + timedelta(seconds=30 * position)
                rows.append(
                    {"item": shown[k], "rater": rater, "label": look(rater, shown[k]),
                     "labeled_at": at}
                )  # fmt: skip
        ingest_labels(uow, "sim", rows, received_at=start + timedelta(hours=10))
        status = repeat_status(uow, "sim", now=start + timedelta(hours=10))
        if all(s.have >= s.needed for s in status):
            break
    status = {s.rater: s for s in repeat_status(uow, "sim", now=T0 + timedelta(days=days))}
    assert set(status) == set(RELIABILITY)
    for s in status.values():
        assert s.have >= s.needed, s
        assert s.fulfilled == s.planned and s.expired == 0 and s.outstanding == 0
        # the share sets the pace: about 10% of the rater's items were shown again
        assert s.have <= 0.1 * ITEMS_PER_DAY * days + 1
    assert days < 20
    # the recompute's self-agreement interval is as narrow as wanted (about +-0.10)
    result = recompute_project(uow, find_project_id(uow, "sim"), now=T0 + timedelta(days=days + 1))
    raters = result.written[0].rendered["raters"]
    for rater in RELIABILITY:
        sa = raters[rater]["self_agreement"]
        assert (sa["ci_high"] - sa["ci_low"]) / 2 <= 0.11, (rater, sa)
