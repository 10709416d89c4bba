"""The rater_change default rule in the service (issue 21): detectors advanced from the label
watermark, a degrading rater caught, her partners left alone, a revert restarting them."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import text

from auditor.services.alerts.reads import alert_status
from auditor.services.alerts.rules import install_default_rules
from tests.integration.alerts.support import CATEGORIES, T0, ingest, labels, log_channel, recompute

RULE = "p:default:rater_change"
HOUR = timedelta(hours=1)


def _detectors(engine) -> dict[str, dict]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT subject_key, state FROM alert_detectors WHERE rule_id = :r"), {"r": RULE}
        )
        return {key: json.loads(state) for key, state in rows}


def _status(uow) -> dict[str, str]:
    return {s.subject: s.status for s in alert_status(uow, "p") if s.rule_id == RULE}


def test_a_degrading_rater_is_caught_and_a_revert_restarts_the_detectors(uow, engine, project):
    log_channel(uow)
    install_default_rules(uow, "p", ["log"])
    # 700 items, three raters agreeing 90% of the time: each learns her group baseline
    ingest(uow, "p", labels(700, T0, agreement=0.9, prefix="g", seed=1))
    recompute(uow, project, T0 + 3 * HOUR)
    assert _status(uow) == dict.fromkeys(("rater:a", "rater:b", "rater:c"), "ok")
    first = _detectors(engine)
    assert first[""]["upto"] > 0 and first["rater:c"]["base_n"]["group"] >= 300
    # c answers at random from here on; a and b stay as they were
    bad = labels(120, T0 + 3 * HOUR, agreement=0.9, prefix="b", seed=2)
    for row in bad:
        if row["rater"] == "c" and int(row["item"][1:]) % 3:  # two labels in three wrong
            row["label"] = CATEGORIES[(CATEGORIES.index(row["label"]) + 1) % len(CATEGORIES)]
    ingest(uow, "p", bad)
    recompute(uow, project, T0 + 5 * HOUR)
    assert _status(uow) == {"rater:a": "ok", "rater:b": "ok", "rater:c": "firing"}
    # her episode fired: her looks so far are no reference for her later repeats
    fired = _detectors(engine)
    assert fired["rater:c"]["alarmed"] and fired["rater:c"]["stale_upto"] > first[""]["upto"]
    assert not fired["rater:a"]["alarmed"] and fired["rater:a"]["stale_upto"] == -1
    # a revert (labels the detectors had read are gone) restarts every detector
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM labels WHERE id IN (SELECT id FROM labels LIMIT 30)"))
    ingest(uow, "p", labels(5, T0 + 6 * HOUR, agreement=0.9, prefix="n", seed=4))
    recompute(uow, project, T0 + 7 * HOUR)
    after = _detectors(engine)
    assert all(after[k]["restarts"] == 1 for k in ("rater:a", "rater:b", "rater:c"))
    assert after["rater:c"]["statistic"] == 0.0 and not after["rater:c"]["alarmed"]
