"""A degrading rater caught, then retrained: her ``rater_change`` episode resolves soon after
(the demo's world, ``benchmarks/alert_quality.py``: r07 at reliability 0.35 from day 20 for 10
days, then back at 0.92). Before, her new repeats were compared with the bad spell's looks
and kept her episode open 3-6 days or more after retraining."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from auditor.alerting import ConditionKind

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "alert_quality.py"
WITHIN_HOURS = 72


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("alert_quality", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("alert_quality", module)
    spec.loader.exec_module(module)
    return module


def test_a_retrained_rater_episode_resolves_within_three_days():
    bench = _benchmark()
    rules = tuple(
        r for r in bench.after_rules("p") if r.condition.kind is ConditionKind.RATER_CHANGE
    )
    run = bench.simulate(2, 36, 0.35, rules)
    mine = "rater:r07"
    assert run.first_bad is not None and run.first_back is not None
    fired = [t for _, s, t in run.episodes if s == mine]
    assert len(fired) == 1 and run.first_bad < fired[0] < run.first_back  # caught, once
    resolved = [t for _, s, t in run.resolved if s == mine and t > run.first_back]
    assert resolved, "her episode is still open 6 days after retraining"
    hours = (resolved[0] - run.first_back).total_seconds() / 3600
    assert hours <= WITHIN_HOURS, f"resolved {hours:.0f} h after retraining"
