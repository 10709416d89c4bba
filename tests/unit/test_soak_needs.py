"""benchmarks/soak.py runs from the project's own venv: nothing of the test tools (issue 26
item 5; it imported tests.services, hence pytest), its servers chosen by options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"
# pytest and the tests package unimportable, as in a venv with the project alone
RUN = (
    "import runpy, sys; sys.modules['pytest'] = None; sys.modules['tests'] = None; "
    f"sys.argv = ['soak.py', '--help']; runpy.run_path({str(SOAK)!r}, run_name='__main__')"
)


def test_soak_starts_without_the_test_tools_and_takes_its_servers_as_options() -> None:
    result = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for option in ("--postgres-url", "--database", "--redis-url"):
        assert option in result.stdout
