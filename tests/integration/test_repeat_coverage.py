"""Repeat coverage per rater: points of the cumulative snapshot (history, /metrics, the
dashboard's rater table) and the ready-made rule "not enough repeats for a reliable
self-agreement", which fires for a rater left short for two weeks and not for one covered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.api.prometheus import exposition
from auditor.services import alerts as _evaluation  # noqa: F401  (registers the hook)
from auditor.services.alert_admin import alert_status, install_default_rules
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.dashboard import project_detail
from auditor.services.queries.history import metric_history
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.services.repeats.planner import plan_repeats, update_repeat_settings
from auditor.storage.unit_of_work import UnitOfWork

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _day(day: int, raters: list[str], repeats: dict[str, list[str]]) -> list[dict]:
    """20 items each for ``raters`` (every rater labels the same items), and the repeats."""
    start = T0 + timedelta(days=day)
    rows = [
        {"item": f"d{day}-{k}", "rater": r, "label": "ab"[k % 2],
         "labeled_at": start + timedelta(minutes=k)}
        for r in raters for k in range(20)
    ]  # fmt: skip
    for rater, items in repeats.items():
        rows += [
            {"item": i, "rater": rater, "label": "a", "labeled_at": start + timedelta(hours=1)}
            for i in items
        ]
    return rows


def test_coverage_points_dashboard_metrics_and_the_rule(uow, engine) -> None:
    create_project(uow, "p", ["a", "b"])
    update_repeat_settings(uow, "p", share=1.0, min_gap_items=0, min_gap_hours=1)
    install_default_rules(uow, "p")
    project = find_project_id(uow, "p")
    ingest_labels(uow, "p", _day(0, ["good", "short"], {}), received_at=T0 + timedelta(hours=2))
    for day in range(1, 17):
        now = T0 + timedelta(days=day)
        # "good" shows every planned item again the same day; "short" is never planned
        plan = plan_repeats(uow, "p", "good", 200, now=now)
        rows = _day(day, ["good", "short"], {"good": [e["item"] for e in plan["items"]]})
        ingest_labels(uow, "p", rows, received_at=now + timedelta(hours=2))
        recompute_project(uow, project, now=now + timedelta(hours=3), force=True)

    planned = metric_history(uow, "p", "repeats_planned", subject="rater:good")
    assert planned[-1].value > 100 and planned[0].value < planned[-1].value
    needed = metric_history(uow, "p", "repeats_needed", subject="rater:short")
    assert needed[-1].value == 98 and needed[-1].n == 0  # no repeats: the worst case
    short = metric_history(uow, "p", "repeat_coverage", subject="rater:short")
    assert short[-1].value == 0.0 and short[-1].n == 98

    states = {(s.rule_id, s.subject): s.status for s in alert_status(uow, "p")}
    assert states[("p:default:repeat_coverage", "rater:short")] == "firing"
    assert states[("p:default:repeat_coverage", "rater:good")] == "ok"

    rows = {row.rater: row for row in project_detail(uow, "p").raters}
    assert rows["short"].measures["repeats_needed"]["value"] == 98
    assert rows["good"].measures["repeats_fulfilled"]["value"] == planned[-1].value

    scrape = exposition(lambda: UnitOfWork(engine)).decode()
    line = 'auditor_metric_value{metric="repeat_coverage",project="p",scope="cumulative",'
    assert any(x.startswith(line) and 'subject="rater:short"' in x for x in scrape.splitlines())
