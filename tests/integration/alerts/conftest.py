"""Fixtures of the alert integration tests (databases come from tests/integration/conftest)."""

from __future__ import annotations

import pytest

from tests.integration.alerts.support import make_project
from tests.integration.notifiers.conftest import Receiver, receiver  # noqa: F401  (fixture)
from tests.integration.notifiers.test_email import smtp_server  # noqa: F401  (fixture)

__all__ = ["Receiver"]


@pytest.fixture
def project(uow) -> int:
    """Project ``p`` (windows 7d, 60 s ticks); its id."""
    return make_project(uow)
