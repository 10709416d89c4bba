"""Suite-wide fixtures and the CI rule: a test that needs a server never skips in CI."""

from __future__ import annotations

import pytest

from tests.services import IN_CI

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
