"""Fixtures of the alert integration tests (databases come from tests/integration/conftest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from auditor.notifiers.targets import resolving_with
from tests.integration.alerts.support import make_project
from tests.integration.notifiers.conftest import Receiver, receiver  # noqa: F401  (fixture)
from tests.integration.notifiers.test_email import smtp_server  # noqa: F401  (fixture)
from tests.resolvers import hosts_only

__all__ = ["Receiver"]


@pytest.fixture(autouse=True)
def _no_dns() -> Iterator[None]:
    """Channel checks resolve with this machine's names only: no test sends a DNS query
    (issue 26; a test that needs another name passes a resolver of its own)."""
    with resolving_with(hosts_only):
        yield


@pytest.fixture
def project(uow) -> int:
    """Project ``p`` (windows 7d, 60 s ticks); its id."""
    return make_project(uow)
