"""Suite-wide fixtures and the CI rule: a test that needs a server never skips in CI."""

from __future__ import annotations

from typing import Any

import pytest

from tests.services import IN_CI
from tests.timing import recent_slowness

SERVER_MARKERS = ("postgres", "redis")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    expected_failure = hasattr(report, "wasxfail")  # an xfail reports as skipped: not a skip
    needs_server = any(item.get_closest_marker(m) for m in SERVER_MARKERS)
    if IN_CI and report.skipped and not expected_failure and needs_server:
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where its server is required: {report.longrepr}"


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> object:
    """pytest-timeout's limit (300 s, or a test's own mark) is for a quiet machine: stretched
    by the measured slowness (tests/timing.py), so a test that takes 60 s of CPU (three demo
    runs) is not killed at load 10 on two cores, yet a hung test still is."""
    plugin = item.config.pluginmanager.get_plugin("timeout")
    if plugin is None:
        return None
    stretched = settings._replace(timeout=settings.timeout * recent_slowness())
    return plugin.pytest_timeout_set_timer(item=item, settings=stretched)


# Directories whose session fixtures are expensive (a seeded server and Chromium; a served
# project with three days of snapshots): under `make test`'s --dist loadfile their files run on
# one pytest-xdist worker, so the fixture is built once, not once per worker. (Not loadgroup:
# xdist 3.8 groups by rewriting a node id, which pytest 9 no longer lets it do.)
SHARED_SESSION_DIRECTORIES = ("tests/e2e/browser/", "tests/integration/client/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> object:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileOrDirectory(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = str(super()._split_scope(nodeid))
            return next((d for d in SHARED_SESSION_DIRECTORIES if path.startswith(d)), path)

    return FileOrDirectory(config, log)
