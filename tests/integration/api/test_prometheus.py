"""A real Prometheus (Debian's ``prometheus`` package) scrapes ``auditor serve`` with the
metrics token, and a reliability series is read back through Prometheus' query API; the
exposition passes ``promtool check metrics``.

Prometheus must be installed for this test: CI (``CI=true``) fails without it, elsewhere the
test skips saying how to install it (``apt-get install -y prometheus``).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.api.conftest import free_port, seed, serving
from tests.services import IN_CI

pytestmark = pytest.mark.e2e
TOKEN = "prometheus-scrape-token-for-tests"
SERIES = (
    'auditor_metric_value{project="alpha",metric="kappa_s",subject="project",scope="cumulative"}'
)


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed (apt-get install -y prometheus)"
        if IN_CI:
            pytest.fail(f"{message}; CI requires it", pytrace=False)
        pytest.skip(message)
    return found


def _config(target: str, token_file: Path) -> str:
    return f"""
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: auditor
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ["{target}"]
"""


def _query(base: str, expression: str) -> list[dict]:
    answer = httpx.get(f"{base}/api/v1/query", params={"query": expression}, timeout=5)
    answer.raise_for_status()
    return answer.json()["data"]["result"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres)])
def test_prometheus_scrapes_with_the_token_and_reads_a_reliability_series(
    database_url: str, tmp_path: Path
) -> None:
    prometheus, promtool = _tool("prometheus"), _tool("promtool")
    keys, _ = seed(database_url)
    with serving(database_url, AUDITOR_METRICS_TOKEN=TOKEN) as (base, _process):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        exposition = httpx.get(f"{base}/metrics", headers=auth).text
        assert httpx.get(f"{base}/metrics").status_code == 401  # the token is required
        checked = subprocess.run(
            [promtool, "check", "metrics"], input=exposition, capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        latest = httpx.get(
            f"{base}/api/v1/projects/alpha/snapshots/latest",
            headers={"Authorization": f"Bearer {keys[('alpha', 'read')]}"},
        ).json()
        expected = latest["measures"]["kappa_s"]["value"]

        token_file = tmp_path / "token"
        token_file.write_text(TOKEN)
        config = tmp_path / "prometheus.yml"
        config.write_text(_config(base.removeprefix("http://"), token_file))
        port = free_port()
        log = (tmp_path / "prometheus.log").open("w")
        server = subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            prom = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            result: list[dict] = []
            while not result:
                said = (tmp_path / "prometheus.log").read_text()[-3000:]
                assert server.poll() is None, said
                assert time.monotonic() < deadline, f"no {SERIES} in 60 s:\n{said}"
                with contextlib.suppress(httpx.HTTPError):
                    result = _query(prom, SERIES)
                time.sleep(0.5)
            (series,) = result
            assert float(series["value"][1]) == pytest.approx(expected, abs=1e-12)
            targets = httpx.get(f"{prom}/api/v1/targets", timeout=5).json()["data"]
            (target,) = targets["activeTargets"]
            assert target["health"] == "up", target
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
