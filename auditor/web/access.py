"""Who may read the dashboard.

The dashboard is read-only but shows every project's reliability, so it is closed by default:

- No operator token configured (``AUDITOR_DASHBOARD_TOKEN`` unset): only clients on this
  machine are served (``auditor serve`` on a laptop, opened in the browser of the same
  machine). "On this machine" is the rule of ``auditor.services.access.client_access``: a loopback
  peer and no forwarding header, unless the peer is a proxy listed in
  ``AUDITOR_TRUSTED_PROXIES`` that names a loopback client. Anyone else gets 403 with the
  reason.
- Token configured: every client must present it, either as ``Authorization: Bearer <token>``
  or through a session opened at ``/login``: the cookie holds a random session id stored
  server-side with an expiry (``auditor.services.access.dashboard_sessions``), deleted at
  ``/logout``. Loopback gets no exemption then, because behind a reverse proxy every request
  comes from loopback.

Failed sign-in attempts are limited per client (``LOGIN_ATTEMPTS`` a minute; a successful
one counts nothing, so an operator who signs in often is never refused) and the token is
compared in constant time. The per-project API keys are deliberately not accepted: a key is
scoped to one project, while the dashboard lists them all.
"""

from __future__ import annotations

import hmac
import time
from collections import deque
from collections.abc import Callable, Sequence

from starlette.requests import Request

from auditor.config import Settings
from auditor.services.access.client_access import (
    Network,
    bearer_matches,
    client_addresses,
    local_client,
)
from auditor.services.access.dashboard_sessions import session_valid
from auditor.storage.unit_of_work import UnitOfWork

TOKEN_ENV = "AUDITOR_DASHBOARD_TOKEN"
COOKIE = "auditor_dashboard"
LOGIN_ATTEMPTS = 5
LOGIN_WINDOW_SECONDS = 60.0


class AttemptLimiter:
    """At most ``limit`` failed attempts per client in any ``window`` seconds (one process's
    count; several API processes each keep their own)."""

    def __init__(
        self,
        limit: int = LOGIN_ATTEMPTS,
        window: float = LOGIN_WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._seen: dict[str, deque[float]] = {}

    def wait(self, client: str | Sequence[str]) -> float | None:
        """None if an attempt may go ahead now, else seconds until one may: any of
        ``client`` over the limit refuses. Counts nothing (``failed`` does)."""
        clients = [client] if isinstance(client, str) else list(client)
        now = self.clock()
        if len(self._seen) > 10_000:  # many clients: forget the ones whose window is over
            self._seen = {k: v for k, v in self._seen.items() if v and v[-1] > now - self.window}
        waits = []
        for name in clients:
            seen = self._seen.get(name)
            if seen is None:
                continue
            while seen and seen[0] <= now - self.window:
                seen.popleft()
            if len(seen) >= self.limit:
                waits.append(seen[0] + self.window - now)
        return max(waits) if waits else None

    def failed(self, client: str | Sequence[str]) -> None:
        """Count one failed attempt against every one of ``client``."""
        clients = [client] if isinstance(client, str) else list(client)
        now = self.clock()
        for name in clients:
            self._seen.setdefault(name, deque()).append(now)

    def allow(self, client: str | Sequence[str]) -> float | None:
        """``wait``, and when the attempt may go ahead, count it (as a failure would be)."""
        waited = self.wait(client)
        if waited is None:
            self.failed(client)
        return waited


class DashboardAccess:
    def __init__(
        self,
        token: str | None,
        trusted_proxies: Sequence[Network] = (),
        cookie_secure: bool = False,
        limiter: AttemptLimiter | None = None,
    ) -> None:
        self.token = token or None
        self.trusted_proxies = tuple(trusted_proxies)
        self.cookie_secure = cookie_secure
        self.limiter = limiter or AttemptLimiter()

    @classmethod
    def from_settings(cls, settings: Settings, token: str | None = None) -> DashboardAccess:
        """``token`` overrides the settings' ``AUDITOR_DASHBOARD_TOKEN``."""
        if token is None and settings.dashboard_token is not None:
            token = settings.dashboard_token.get_secret_value()
        return cls(token, settings.trusted_proxy_networks, settings.cookie_secure)

    def token_matches(self, candidate: str) -> bool:
        return self.token is not None and hmac.compare_digest(
            candidate.encode(), self.token.encode()
        )

    def client_key(self, request: Request) -> list[str]:
        """The clients sign-in attempts are counted against."""
        peer = request.client.host if request.client else None
        return client_addresses(peer, request.headers, self.trusted_proxies)

    def secure_cookie(self, request: Request) -> bool:
        return self.cookie_secure or request.url.scheme == "https"

    def check(self, request: Request, uow: Callable[[], UnitOfWork]) -> str | None:
        """None when the request may read the dashboard, else the reason it may not."""
        if self.token is None:
            peer = request.client.host if request.client else None
            reason = local_client(peer, request.headers, self.trusted_proxies)
            if reason is None:
                return None
            return (
                f"the dashboard answers only clients on this machine unless {TOKEN_ENV} is "
                f"set ({reason})"
            )
        if bearer_matches(request.headers.get("authorization", ""), self.token):
            return None
        session = request.cookies.get(COOKIE, "")
        if session and session_valid(uow(), session):
            return None
        return "sign in with the operator token"
