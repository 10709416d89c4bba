"""The demo is deterministic for a seed and shows the degrading rater plainly."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from auditor.cli import app


def _run(tmp_path, name: str, seed: int) -> str:
    # the end pinned: by default the story ends at the current hour, which may turn between runs
    arguments = ["--seed", str(seed), "--ends-at", "2024-03-28T00:00Z"]
    result = CliRunner().invoke(
        app, ["demo", *arguments, "--database", f"sqlite:///{tmp_path / name}"]
    )
    assert result.exit_code == 0, result.output
    # timings differ between runs; everything else must not
    return re.sub(r"in \d+\.\d s", "in <t> s", result.stdout).replace(name, "<db>")


def test_demo_is_deterministic_and_shows_the_drop(tmp_path):
    first = _run(tmp_path, "a.db", 7)
    assert first == _run(tmp_path, "b.db", 7)
    assert first != _run(tmp_path, "c.db", 8)
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
