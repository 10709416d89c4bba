"""Prometheus exposition of what the database knows, read at scrape time.

Every API process answers a scrape from the same rows, so it does not matter which process
Prometheus reaches (no per-process counters that disagree or reset on restart):

- ``auditor_metric_value{project, metric, subject, scope}``: the latest snapshot's values
  (undefined values are left out: a gauge has no "undefined");
- ``auditor_labels_ingested_total{project}``: labels stored (a count, so it only falls if
  labels are deleted);
- ``auditor_recompute_duration_seconds{project, scope}`` and
  ``auditor_last_recompute_timestamp_seconds{project}``: alert on
  ``time() - auditor_last_recompute_timestamp_seconds > ...`` to catch a stale pipeline;
- ``auditor_recompute_failures_total{project}`` and ``auditor_recompute_failing{project}``:
  recomputes that failed (recorded per project, retried with a backoff);
- ``auditor_alert_state{project, rule, subject, status}`` (1 per current state) and
  ``auditor_outbox_messages{project, status}`` (the delivery backlog is status "pending");
- ``auditor_label_studio_rejected_total{project, status}`` and
  ``auditor_label_studio_rejected_since_sync{project}``: Label Studio webhook calls refused
  (each a change lost until a sync);
- ``auditor_metric_info{metric, subjects, better, band}``: 1 per metric of the catalogue
  (``auditor.stats.catalogue``), so a dashboard or an alert can tell which way is good
  (``better`` is higher, lower, or empty for counts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from auditor.services.label_studio.rejections import all_rejections
from auditor.services.queries.project_reads import metrics_facts
from auditor.services.recompute import health as recompute_health
from auditor.services.recompute.health import FailureRow
from auditor.stats.catalogue import METRICS
from auditor.storage.label_studio_settings_repository import RejectionRecord
from auditor.storage.unit_of_work import UnitOfWork

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def subject_label(kind: str, subject_id: str) -> str:
    return "project" if kind == "project" else f"{kind}:{subject_id}"


class DatabaseCollector(Collector):
    def __init__(self, uow_factory: Callable[[], UnitOfWork]) -> None:
        self.uow_factory = uow_factory

    def collect(self) -> Iterator[Metric]:
        facts = metrics_facts(self.uow_factory())
        yield _catalogue()
        yield from _snapshot_metrics(facts)
        yield from _alert_metrics(facts)
        yield from _failure_metrics(recompute_health.failures(self.uow_factory()))
        yield from _label_studio_metrics(all_rejections(self.uow_factory()))


def _catalogue() -> Metric:
    info = GaugeMetricFamily(
        "auditor_metric_info",
        "1 per metric a snapshot reports: its subject kinds, which way is better, its band.",
        labels=["metric", "subjects", "better", "band"],
    )
    better = {True: "higher", False: "lower", None: ""}
    for m in METRICS:
        labels = [m.name, ",".join(m.subjects), better[m.higher_is_better], m.band or ""]
        info.add_metric(labels, 1.0)
    return info


def _failure_metrics(rows: list[FailureRow]) -> Iterator[Metric]:
    total = CounterMetricFamily(
        "auditor_recompute_failures",
        "Recomputes of a project that failed (recorded, then retried with a backoff).",
        labels=["project"],
    )
    failing = GaugeMetricFamily(
        "auditor_recompute_failing",
        "1 while a project's latest recompute failed (no success since).",
        labels=["project"],
    )
    for row in rows:
        total.add_metric([row.slug], row.failures)
        failing.add_metric([row.slug], 1.0 if row.consecutive > 0 else 0.0)
    yield total
    yield failing


def _label_studio_metrics(rows: list[RejectionRecord]) -> Iterator[Metric]:
    total = CounterMetricFamily(
        "auditor_label_studio_rejected",
        "Label Studio webhook calls refused, per project and HTTP status (Label Studio never "
        "retries one: each is a change lost until `auditor label-studio sync`).",
        labels=["project", "status"],
    )
    since = GaugeMetricFamily(
        "auditor_label_studio_rejected_since_sync",
        "Label Studio webhook calls refused since the project's last sync.",
        labels=["project"],
    )
    by_project: dict[str, int] = {}
    for row in rows:
        total.add_metric([row.project, str(row.status)], row.total)
        by_project[row.project] = by_project.get(row.project, 0) + row.since_sync
    for slug, count in sorted(by_project.items()):
        since.add_metric([slug], count)
    yield total
    yield since


def _snapshot_metrics(facts: dict[str, Any]) -> Iterator[Metric]:
    values = GaugeMetricFamily(
        "auditor_metric_value",
        "Latest snapshot value of a measure.",
        labels=["project", "metric", "subject", "scope"],
    )
    for p in facts["points"]:
        if p.value is not None:
            subject = subject_label(p.subject_kind, p.subject_id)
            values.add_metric([p.slug, p.metric, subject, p.scope], p.value)
    yield values

    labels = CounterMetricFamily(
        "auditor_labels_ingested", "Labels stored per project.", labels=["project"]
    )
    for slug, count in sorted(facts["labels"].items()):
        labels.add_metric([slug], count)
    yield labels

    duration = GaugeMetricFamily(
        "auditor_recompute_duration_seconds",
        "Duration of the latest recompute of a scope.",
        labels=["project", "scope"],
    )
    last = GaugeMetricFamily(
        "auditor_last_recompute_timestamp_seconds",
        "Unix time of the latest successful recompute of a project.",
        labels=["project"],
    )
    newest: dict[str, float] = {}
    for r in facts["recomputes"]:
        duration.add_metric([r.slug, r.scope], r.duration_ms / 1000.0)
        moment = r.computed_at.timestamp()
        newest[r.slug] = max(newest.get(r.slug, moment), moment)
    for slug, moment in sorted(newest.items()):
        last.add_metric([slug], moment)
    yield duration
    yield last


def _alert_metrics(facts: dict[str, Any]) -> Iterator[Metric]:
    states = GaugeMetricFamily(
        "auditor_alert_state",
        "1 for the current status of each (rule, subject) alert state.",
        labels=["project", "rule", "subject", "status"],
    )
    for state in facts["alerts"]:
        labels = [state["slug"], state["rule_id"], state["subject_key"], state["status"]]
        states.add_metric(labels, 1.0)
    yield states
    outbox = GaugeMetricFamily(
        "auditor_outbox_messages",
        "Notification outbox rows per status (pending ones are the delivery backlog).",
        labels=["project", "status"],
    )
    for slug, counts in sorted(facts["outbox"].items()):
        for status, count in sorted(counts.items()):
            outbox.add_metric([slug, status], count)
    yield outbox


def exposition(uow_factory: Callable[[], UnitOfWork]) -> bytes:
    """The text exposition of one scrape."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector(uow_factory))
    return generate_latest(registry)
