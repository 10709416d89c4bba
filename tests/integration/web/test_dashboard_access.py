"""Dashboard access over HTTP (the ASGI app, a database of each backend): the proxy rule of
the tokenless dashboard, server-side sessions revoked at sign-out, cookie attributes, and
the per-client limit on sign-in attempts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from auditor.config import Settings
from auditor.services.access.dashboard_sessions import open_session
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from auditor.web import install_dashboard
from auditor.web.access import COOKIE, AttemptLimiter

TOKEN = "dashboard-operator-token"


def _app(database_url: str, token: str = "", **settings: object) -> FastAPI:
    app = FastAPI()
    app.state.settings = Settings(database_url=database_url, **settings)  # type: ignore[arg-type]
    install_dashboard(app, token=token)
    return app


def _client(app: FastAPI, peer: str = "127.0.0.1", **kwargs: object) -> TestClient:
    return TestClient(app, client=(peer, 41000), follow_redirects=False, **kwargs)


@pytest.mark.parametrize(
    "headers",
    [{"X-Real-IP": "127.0.0.1"}, {"X-Forwarded-For": "203.0.113.5"}, {"Forwarded": "for=::1"}],
)
def test_tokenless_dashboard_refuses_relayed_requests_from_loopback(database_url, headers) -> None:
    with _client(_app(database_url)) as client:
        assert client.get("/").status_code == 200  # this machine, not relayed
        refused = client.get("/", headers=headers)
        assert refused.status_code == 403 and "AUDITOR_TRUSTED_PROXIES" in refused.text
    with _client(_app(database_url), peer="192.0.2.10") as client:
        assert client.get("/").status_code == 403


def test_a_trusted_proxy_may_relay_a_local_client(database_url) -> None:
    app = _app(database_url, trusted_proxies="127.0.0.1/32")
    with _client(app) as client:
        assert client.get("/", headers={"X-Real-IP": "127.0.0.1"}).status_code == 200
        assert client.get("/", headers={"X-Real-IP": "203.0.113.5"}).status_code == 403
        # A proxy passes on what the client sent: one header naming loopback proves nothing
        # while another names a remote client (nginx forwards a client's own Forwarded header
        # and appends the real address to X-Forwarded-For).
        forged = {"Forwarded": "for=127.0.0.1", "X-Forwarded-For": "203.0.113.5"}
        assert client.get("/", headers=forged).status_code == 403
        forged = {"X-Real-IP": "203.0.113.5", "X-Forwarded-For": "127.0.0.1"}
        assert client.get("/", headers=forged).status_code == 403


def test_a_client_rotating_a_forged_header_stays_limited(database_url) -> None:
    app = _app(database_url, TOKEN, trusted_proxies="127.0.0.1/32")
    with _client(app) as client:
        for n in range(5):
            relayed = {"Forwarded": f"for=10.0.0.{n}", "X-Forwarded-For": "203.0.113.9"}
            answer = client.post("/login", data={"token": "guess"}, headers=relayed)
            assert answer.status_code == 401
        relayed = {"Forwarded": "for=10.0.0.99", "X-Forwarded-For": "203.0.113.9"}
        assert client.post("/login", data={"token": "guess"}, headers=relayed).status_code == 429
        other = {"X-Forwarded-For": "203.0.113.10"}  # another real client is not held back
        assert client.post("/login", data={"token": "guess"}, headers=other).status_code == 401


def _sign_in(client: TestClient, token: str = TOKEN) -> str:
    answer = client.post("/login", data={"token": token, "next": "/"})
    assert answer.status_code == 303, answer.text
    return answer.headers["set-cookie"]


def test_sessions_are_random_server_side_and_die_at_sign_out(database_url) -> None:
    with _client(_app(database_url, TOKEN)) as client:
        header = _sign_in(client)
        first = client.cookies[COOKIE]
        assert TOKEN not in header and first not in TOKEN
        parts = {p.strip().split("=")[0].lower() for p in header.split(";")}
        assert {"httponly", "samesite", "max-age"} <= parts and "secure" not in parts
        assert "samesite=strict" in header.lower()
        assert client.get("/").status_code == 200
        client.cookies.clear()
        _sign_in(client)
        assert client.cookies[COOKIE] != first  # a new random id per sign-in
        assert client.get("/logout").status_code == 303
        client.cookies.clear()
        client.cookies.set(COOKIE, first)
        assert client.get("/").status_code == 200  # the other session is still alive
        client.get("/logout")
        client.cookies.set(COOKIE, first)  # a copy kept after sign-out
        answer = client.get("/")
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_an_expired_or_unknown_session_is_refused(database_url) -> None:
    engine = make_engine(database_url)
    try:
        expired = open_session(UnitOfWork(engine), lifetime=timedelta(seconds=-1))
    finally:
        engine.dispose()
    with _client(_app(database_url, TOKEN)) as client:
        for value in (expired, "made-up-session-id", "x" * 5000):
            client.cookies.set(COOKIE, value)
            assert client.get("/").status_code == 303


def test_the_cookie_is_secure_over_https_or_when_configured(database_url) -> None:
    with _client(_app(database_url, TOKEN), base_url="https://testserver") as client:
        assert "secure" in _sign_in(client).lower()
    with _client(_app(database_url, TOKEN, cookie_secure=True)) as client:
        assert "secure" in _sign_in(client).lower()


def test_sign_in_attempts_are_limited_per_client(database_url) -> None:
    app = _app(database_url, TOKEN)
    with _client(app, peer="198.51.100.7") as client:
        for _ in range(5):
            assert client.post("/login", data={"token": "guess"}).status_code == 401
        limited = client.post("/login", data={"token": TOKEN})  # even the right token now
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
        assert COOKIE not in client.cookies
    with _client(app, peer="198.51.100.8") as other:  # another client is not held back
        _sign_in(other)


def test_successful_sign_ins_are_not_counted(database_url) -> None:
    # Issue 26: the limit is on failures; before, the sixth sign-in of a minute was 429.
    with _client(_app(database_url, TOKEN), peer="198.51.100.9") as client:
        for _ in range(8):
            _sign_in(client)
        for _ in range(4):  # failures still count: four, then a success, then the fifth
            assert client.post("/login", data={"token": "guess"}).status_code == 401
        _sign_in(client)
        assert client.post("/login", data={"token": "guess"}).status_code == 401
        assert client.post("/login", data={"token": TOKEN}).status_code == 429


def test_the_attempt_window_slides() -> None:
    now = [0.0]
    limiter = AttemptLimiter(limit=2, window=60, clock=lambda: now[0])
    assert limiter.allow("a") is None and limiter.allow("a") is None
    assert limiter.allow("a") == 60
    now[0] = 30
    assert limiter.allow("a") == 30 and limiter.allow("b") is None
    now[0] = 60.5  # both attempts left the window (refused ones never counted)
    assert limiter.allow("a") is None and limiter.allow("a") is None
    assert limiter.allow("a") == 60
