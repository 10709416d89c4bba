"""Where the tests find PostgreSQL and Redis, and what happens when they are not there.

On a laptop without the servers the tests that need them skip with a clear message; in CI
(``CI=true``) they fail instead, so a missing server can never turn into a green run.
"""

from __future__ import annotations

import os
import socket

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

POSTGRES_ADMIN_URL = os.environ.get(
    "AUDITOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("AUDITOR_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip (laptop) or fail (CI) the calling test when ``host:port`` does not answer."""
    if _reachable(host, port):
        return
    message = f"{name} is not reachable at {host}:{port}"
    if IN_CI:
        pytest.fail(f"{message}; CI requires it", pytrace=False)
    pytest.skip(f"{message}; start it to run this test")


def require_postgres() -> None:
    require_service("PostgreSQL", "127.0.0.1", 5432)


def require_redis() -> None:
    require_service("Redis", "127.0.0.1", 6379)
