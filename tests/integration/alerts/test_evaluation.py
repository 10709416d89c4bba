"""Evaluation after each snapshot, on SQLite and PostgreSQL: the log, redelivery, atomicity,
drop rules with their lookback, silences, repeats and resolution."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from auditor.services.alerts.evaluation import evaluate_snapshots
from auditor.services.alerts.reads import alert_status, notification_history
from auditor.services.alerts.rules import RuleSpec, add_rule, install_default_rules
from auditor.services.alerts.silences import add_silence
from auditor.storage.alert_log_repository import AlertLog
from tests.integration.alerts.support import (
    T0,
    evaluations,
    ingest,
    kappa_rule,
    labels,
    log_channel,
    recompute,
)

HOUR = timedelta(hours=1)


def _count(engine, table: str) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def _good_then_bad(uow, project, *, bad_at=T0 + 2 * HOUR):
    """kappa 1 at T0+1h (clear), then mostly disagreement (breach of 'below 0.5')."""
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    return recompute(uow, project, bad_at)


def test_one_log_row_per_rule_subject_and_snapshot(uow, engine, project):
    log_channel(uow)
    kappa_rule(uow)
    add_rule(
        uow,
        "p",
        RuleSpec(
            metric="s_vs_group",
            condition="below",
            threshold=0.2,
            subject="every_rater",
            scope="7d",
            name="s-every",
            min_n=5,
        ),
    )
    first = _good_then_bad(uow, project)
    assert len(first.written) == 2  # cumulative and 7d
    history = evaluations(uow, "p", limit=1000)
    keys = [(h.rule_id, h.subject_key, h.snapshot_id) for h in history]
    assert len(keys) == len(set(keys))
    # kappa: the project, in the cumulative snapshot of each of the two recomputes
    assert sum(1 for k in keys if k[0] == "p:kappa") == 2
    # s_vs_group for every rater: three raters in the 7d snapshot of each recompute
    per_rater = sorted(k[1] for k in keys if k[0] == "p:s-every")
    assert per_rater == ["rater:a", "rater:a", "rater:b", "rater:b", "rater:c", "rater:c"]
    last = next(h for h in history if h.rule_id == "p:kappa")
    assert last.verdict == "breach" and last.to_status == "firing"
    assert last.judged_value == pytest.approx(last.value) and last.limit_value == 0.5
    assert len(last.event_ids) == 1


def test_a_redelivered_hook_writes_nothing_new(uow, engine, project):
    log_channel(uow)
    kappa_rule(uow)
    result = _good_then_bad(uow, project)
    before = {t: _count(engine, t) for t in ("alert_evaluations", "alert_outbox")}
    states = alert_status(uow, "p")
    with uow:
        again = evaluate_snapshots(uow, project, result.written)
        uow.commit()
    assert again == {"evaluations": 0, "notices": 0}
    assert {t: _count(engine, t) for t in before} == before
    assert alert_status(uow, "p") == states


def test_state_log_and_outbox_commit_with_the_snapshot_or_not_at_all(
    uow, engine, project, monkeypatch
):
    log_channel(uow)
    kappa_rule(uow)
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    counts = {
        t: _count(engine, t)
        for t in ("snapshots", "alert_states", "alert_evaluations", "alert_outbox")
    }

    def broken(*args, **kwargs):
        raise RuntimeError("injected: the database went away after the state write")

    monkeypatch.setattr(AlertLog, "insert_outbox", broken)
    with pytest.raises(RuntimeError, match="injected"):
        recompute(uow, project, T0 + 2 * HOUR)
    assert {t: _count(engine, t) for t in counts} == counts
    assert [s.status for s in alert_status(uow, "p")] == ["ok"]

    monkeypatch.undo()
    recompute(uow, project, T0 + 2 * HOUR)
    assert [s.status for s in alert_status(uow, "p")] == ["firing"]
    assert _count(engine, "alert_outbox") == 1


def test_drop_rule_compares_with_the_value_a_lookback_ago(uow, project):
    log_channel(uow)
    add_rule(
        uow,
        "p",
        RuleSpec(
            metric="kappa_s",
            condition="drop",
            drop=0.3,
            lookback=timedelta(days=1),
            name="kappa-drop",
            min_n=5,
            channels=("log",),
        ),
    )
    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    first = evaluations(uow, "p")[0]
    assert first.verdict == "insufficient" and "ago" in first.reason

    day = timedelta(days=1)
    ingest(uow, "p", labels(90, T0 + day, agreement=0.0, prefix="b"))
    recompute(uow, project, T0 + day + HOUR)
    latest = evaluations(uow, "p")[0]
    assert latest.lookback_value == pytest.approx(1.0)
    assert latest.verdict == "breach"
    assert latest.judged_value == pytest.approx(1.0 - latest.value)
    assert [s.status for s in alert_status(uow, "p")] == ["firing"]


def test_silence_holds_notices_back_and_releases_the_same_event_id(uow, engine, project):
    log_channel(uow)
    kappa_rule(uow)
    add_silence(
        uow,
        "p",
        rule_id="kappa",
        starts_at=T0,
        ends_at=T0 + 3 * HOUR,
        reason="maintenance",
    )
    _good_then_bad(uow, project)
    assert [s.status for s in alert_status(uow, "p")] == ["firing"]  # state moves anyway
    assert _count(engine, "alert_outbox") == 0
    held = evaluations(uow, "p")[0]
    assert held.silence_id is not None and len(held.suppressed_event_ids) == 1

    ingest(uow, "p", labels(10, T0 + 3 * HOUR, agreement=0.0, prefix="c"))
    recompute(uow, project, T0 + 4 * HOUR)  # the silence has ended; still firing
    sent = notification_history(uow, "p")
    assert [(n.kind, n.event_id) for n in sent] == [("firing", held.suppressed_event_ids[0])]


def test_repeat_interval_then_resolved(uow, project):
    log_channel(uow)
    kappa_rule(uow, repeat_interval=HOUR)
    _good_then_bad(uow, project)  # fires at T0+2h
    recompute(uow, project, T0 + 2.5 * HOUR)  # within the interval: nothing
    recompute(uow, project, T0 + 3.5 * HOUR)  # repeat 1
    recompute(uow, project, T0 + 4 * HOUR)  # within the interval again
    ingest(uow, "p", labels(600, T0 + 4 * HOUR, agreement=1.0, prefix="r"))
    recompute(uow, project, T0 + 6 * HOUR)  # clear, keep_firing_for 0: resolved
    sent = sorted(notification_history(uow, "p"), key=lambda n: n.id)
    assert [(n.kind, n.sequence) for n in sent] == [
        ("firing", 0),
        ("repeat", 1),
        ("resolved", 0),
    ]
    assert len({n.event_id for n in sent}) == 3
    assert [s.status for s in alert_status(uow, "p")] == ["ok"]


def test_default_rules_watch_the_project_and_every_rater(uow, project):
    installed = install_default_rules(uow, "p")
    assert [r.id for r in installed] == [
        "p:default:kappa_s",
        "p:default:rho",
        "p:default:self_agreement_drop",
        "p:default:rater_change",
        "p:default:repeat_coverage",
    ]
    assert install_default_rules(uow, "p") == []  # idempotent
    ingest(uow, "p", labels(30, T0, agreement=0.9, prefix="g"))
    result = recompute(uow, project, T0 + HOUR)
    assert result.status == "written"
    statuses = {(s.rule_id, s.subject) for s in alert_status(uow, "p")}
    assert ("p:default:kappa_s", "project") in statuses
    assert ("p:default:rho", "project") in statuses


def test_a_rule_on_reliability_judges_each_rater(uow, project):
    # issue 10: reliability is a metric for rules. Rater a looks at every item again and
    # answers differently (reliability 0); b looks again and answers the same (reliability 1).
    log_channel(uow)
    add_rule(
        uow,
        "p",
        RuleSpec(
            metric="reliability",
            condition="below",
            threshold=0.5,
            subject="every_rater",
            name="reliable",
            min_n=5,
        ),
    )
    first = labels(24, T0, agreement=1.0, prefix="g")
    again = []
    for row in first:
        if row["rater"] in ("a", "b"):
            label = row["label"] if row["rater"] == "b" else "flip"
            again.append({**row, "label": label, "labeled_at": row["labeled_at"] + HOUR})
    flips = {r["item"]: r["label"] for r in first if r["rater"] == "a"}
    for row in again:
        if row["label"] == "flip":  # any other category than the first look's
            row["label"] = next(c for c in ("yes", "no", "maybe") if c != flips[row["item"]])
    ingest(uow, "p", first + again)
    recompute(uow, project, T0 + 2 * HOUR)
    verdicts = {
        h.subject_key: h.verdict
        for h in evaluations(uow, "p", limit=100)
        if h.rule_id == "p:reliable"
    }
    assert verdicts["rater:a"] == "breach"
    assert verdicts["rater:b"] == "clear"
