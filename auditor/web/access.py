"""Who may read the dashboard.

The dashboard is read-only but shows every project's reliability, so it is closed by default:

- No operator token configured (``AUDITOR_DASHBOARD_TOKEN`` unset): only clients on loopback
  (127.0.0.0/8, ::1) are served. That is the embedded case: ``auditor serve`` on a laptop,
  opened in the browser of the same machine. Anyone else gets 403 with the reason.
- Token configured: every client must present it, either as ``Authorization: Bearer <token>``
  or through the session cookie set by ``/login`` (the cookie holds an HMAC of the token, not
  the token). Loopback gets no exemption then, because behind a reverse proxy every request
  comes from loopback.

The per-project API keys are deliberately not accepted: a key is scoped to one project, while
the dashboard lists them all.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress

from starlette.requests import Request

from auditor.config import Settings

TOKEN_ENV = "AUDITOR_DASHBOARD_TOKEN"
COOKIE = "auditor_dashboard"


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class DashboardAccess:
    def __init__(self, token: str | None) -> None:
        self.token = token or None

    @classmethod
    def from_environment(cls) -> DashboardAccess:
        # A fresh Settings, not the cached one: the token is read when the app is built.
        token = Settings().dashboard_token
        return cls(token.get_secret_value() if token is not None else None)

    def cookie_value(self) -> str:
        if self.token is None:
            raise RuntimeError("no dashboard token is configured, so there is no cookie")
        return hmac.new(self.token.encode(), b"auditor-dashboard-v1", hashlib.sha256).hexdigest()

    def token_matches(self, candidate: str) -> bool:
        return self.token is not None and hmac.compare_digest(
            candidate.encode(), self.token.encode()
        )

    def check(self, request: Request) -> str | None:
        """None when the request may read the dashboard, else the reason it may not."""
        if self.token is None:
            host = request.client.host if request.client else None
            if _is_loopback(host):
                return None
            return (
                f"the dashboard answers only loopback clients unless {TOKEN_ENV} is set "
                f"(this request came from {host or 'an unknown address'})"
            )
        header = request.headers.get("authorization", "")
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(credentials.strip()):
            return None
        cookie = request.cookies.get(COOKIE, "")
        if cookie and hmac.compare_digest(cookie, self.cookie_value()):
            return None
        return "sign in with the operator token"
