"""The demo is deterministic for a seed and shows the degrading rater plainly."""

from __future__ import annotations

import re
from pathlib import Path

from tests.demo_run import END, PINNED, DemoRun, run_demo_cli


def _shown(stdout: str, database: Path) -> str:
    # timings differ between runs; everything else must not
    return re.sub(r"in \d+\.\d s", "in <t> s", stdout).replace(str(database), "<db>")


def _run(tmp_path: Path, name: str, arguments: list[str]) -> str:
    return _shown(run_demo_cli(tmp_path / name, arguments), tmp_path / name)


def test_demo_is_deterministic_and_shows_the_drop(tmp_path: Path, pinned_demo: DemoRun) -> None:
    first = _shown(pinned_demo.stdout, pinned_demo.database)  # the session's run, seed 7
    assert first == _run(tmp_path, "b.db", PINNED)
    # another seed, another run: shown on the shortest story (4 of 24 days), both seeds
    seven, eight = (["--days", "4", "--seed", seed, "--ends-at", END] for seed in ("7", "8"))
    assert _run(tmp_path, "c.db", seven) != _run(tmp_path, "d.db", eight)
    drop = re.search(
        r"last 7 days (\d\.\d+) -> (\d\.\d+), cumulative (\d\.\d+) -> (\d\.\d+)", first
    )
    assert drop, first
    window_before, window_after, cumulative_before, cumulative_after = map(float, drop.groups())
    # the window shows the drop more than the cumulative view does
    assert window_before - window_after > 0.1
    assert window_before - window_after > cumulative_before - cumulative_after > 0
    s_drop = re.search(r"\(S, last 7 days\): (\d\.\d+) -> (\d\.\d+)", first)
    assert float(s_drop.group(1)) - float(s_drop.group(2)) > 0.2
