"""Issue 21 item 6: over a long simulated run of stable raters (the demo's world, 60 days,
``benchmarks/alert_quality.py``), the default per-rater rules raise no episode; the rule of
before the issue (a 0.15 drop between two point values, held 12 hours) does."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from auditor.alerting import SubjectKind

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "alert_quality.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("alert_quality", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("alert_quality", module)
    spec.loader.exec_module(module)
    return module


def test_stable_raters_raise_no_episode_over_sixty_days():
    bench = _benchmark()
    per_rater = lambda rules: tuple(r for r in rules if r.subject.kind is not SubjectKind.PROJECT)  # noqa: E731
    now = bench.simulate(2, 60, None, per_rater(bench.after_rules("p")))
    assert now.episodes == []
    before = bench.simulate(2, 60, None, per_rater(bench.before_rules("p")))
    assert before.episodes, "the rule of before issue 21 fires on a stable rater here"
