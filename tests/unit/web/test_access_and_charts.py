"""Dashboard access policy through the ASGI app (TestClient's peer is not loopback), and the
chart module's counting attributes and undefined-value handling."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from auditor.charts import ChartPoint, ChartSeries, line_chart
from auditor.config import Settings
from auditor.storage.migrate import upgrade
from auditor.web import install_dashboard


def _app(tmp_path, token: str | None) -> FastAPI:
    url = f"sqlite:///{tmp_path / 'dashboard.db'}"
    if token:
        upgrade(url)  # signing in stores a session
    app = FastAPI()
    app.state.settings = Settings(database_url=url)
    install_dashboard(app, token=token or "")
    return app


def test_without_token_only_loopback_is_served(tmp_path) -> None:
    client = TestClient(_app(tmp_path, None))  # peer "testclient" is not a loopback address
    response = client.get("/")
    assert response.status_code == 403
    assert "only clients on this machine" in response.text


def test_with_token_bearer_or_login_cookie(tmp_path) -> None:
    client = TestClient(_app(tmp_path, "s3cret"), follow_redirects=False)
    assert client.get("/").status_code == 303
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 303
    bad = client.post("/login", data={"token": "wrong", "next": "/"})
    assert bad.status_code == 401
    good = client.post("/login", data={"token": "s3cret", "next": "//evil.example/"})
    assert good.status_code == 303 and good.headers["location"] == "/"
    cookie = good.cookies.get("auditor_dashboard")
    assert cookie and "s3cret" not in cookie


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/",
        "/\\evil.example/",
        "/\t/evil.example/",
        "/\n/evil.example",
        "https://evil.example/",
    ],
)
def test_sign_in_never_redirects_to_another_site(tmp_path, target: str) -> None:
    client = TestClient(_app(tmp_path, "s3cret"), follow_redirects=False)
    response = client.post("/login", data={"token": "s3cret", "next": target})
    assert response.status_code == 303 and response.headers["location"] == "/"
    page = client.post("/login", data={"token": "s3cret", "next": "/projects/p?x=1"})
    assert page.headers["location"] == "/projects/p?x=1"


def test_the_sign_in_redirect_keeps_the_path_whole(tmp_path) -> None:
    client = TestClient(_app(tmp_path, "s3cret"), follow_redirects=False)
    response = client.get("/projects/a%26next=x")  # an "&" in a slug is not a new parameter
    assert response.headers["location"] == "/login?next=/projects/a%26next%3Dx"


@pytest.mark.parametrize("values", [[0.5, None, 0.7, 0.9], [None], []])
def test_line_chart_counts_points_and_breaks_on_undefined(values) -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    points = [
        ChartPoint(start + timedelta(hours=i), v, None if v is None else v - 0.1,
                   None if v is None else v + 0.1, 10, None if v is not None else "too few")
        for i, v in enumerate(values)
    ]  # fmt: skip
    svg = line_chart("m", [ChartSeries("cumulative", "#000", points)])
    assert f'data-points="{len(values)}"' in svg
    assert f'data-defined="{sum(v is not None for v in values)}"' in svg
    assert svg.count('data-point="m"') == len(values)
    assert svg.count('data-value=""') == values.count(None)
    # A line never joins across an undefined point: each polyline is one defined run.
    runs = [r for r in "".join("x" if v is not None else " " for v in values).split() if len(r) > 1]
    assert len(re.findall(r"<polyline", svg)) == len(runs)
    if not values:
        assert "no snapshots yet" in svg
