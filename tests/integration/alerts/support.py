"""Shared helpers of the alert integration tests: a small project whose agreement we steer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from auditor.services.alerts.channels import ChannelSpec, add_channel
from auditor.services.alerts.reads import HistoryFilter, alert_history
from auditor.services.alerts.rules import RuleSpec, add_rule
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.recompute.recompute import RecomputeResult, find_project_id, recompute_project
from auditor.storage.alert_records import EvaluationRecord
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
CATEGORIES = ["yes", "no", "maybe"]
RATERS = ["a", "b", "c"]


def make_project(uow: UnitOfWork, slug: str = "p") -> int:
    create_project(uow, slug, CATEGORIES, windows_days=(7,), recompute_interval_seconds=60)
    return find_project_id(uow, slug)


def labels(
    n_items: int,
    start: datetime,
    *,
    agreement: float,
    prefix: str,
    raters: list[str] = RATERS,
    seed: int = 0,
) -> list[dict]:
    """Each rater gives the item's truth with probability ``agreement``, else the next
    category: ``agreement`` 1 gives kappa 1, 0 gives total disagreement with the truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        truth = i % len(CATEGORIES)
        for k, rater in enumerate(raters):
            label = truth if rng.random() < agreement else (truth + 1 + k) % len(CATEGORIES)
            rows.append(
                {
                    "item": f"{prefix}{i}",
                    "rater": rater,
                    "label": CATEGORIES[label],
                    "labeled_at": start + timedelta(seconds=i * 10 + k),
                }
            )
    return rows


def ingest(uow: UnitOfWork, slug: str, rows: list[dict]) -> None:
    ingest_labels(uow, slug, rows, received_at=max(r["labeled_at"] for r in rows))


def recompute(uow: UnitOfWork, project_id: int, now: datetime) -> RecomputeResult:
    return recompute_project(uow, project_id, now=now, force=True)


def log_channel(uow: UnitOfWork, slug: str = "p", name: str = "log") -> None:
    add_channel(uow, slug, ChannelSpec(name=name, kind="log"))


def kappa_rule(
    uow: UnitOfWork,
    slug: str = "p",
    *,
    threshold: float = 0.5,
    channels: tuple[str, ...] = ("log",),
    name: str = "kappa",
    **fields: object,
) -> str:
    spec = RuleSpec(
        metric="kappa_s",
        condition="below",
        threshold=threshold,
        name=name,
        min_n=5,
        channels=channels,
        **fields,  # type: ignore[arg-type]
    )
    return add_rule(uow, slug, spec).id


def evaluations(uow: UnitOfWork, slug: str, limit: int = 100) -> list[EvaluationRecord]:
    """Every evaluation of ``slug``, newest first (what `auditor alerts history --all` reads)."""
    where = HistoryFilter(every_evaluation=True, limit=limit)
    return [row.evaluation for row in alert_history(uow, slug, where).rows]
