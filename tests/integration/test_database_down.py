"""A database that cannot be reached: the server starts anyway; the API answers 503
``unavailable`` with Retry-After (not 500 internal_error) and the dashboard an HTML 503 page
(not the API's JSON). A PostgreSQL URL to a closed port stands for the database being down."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from auditor.config import Settings
from auditor.server import build_app
from auditor.services.access.keys import KEY_SCHEME
from auditor.storage.db import is_connection_error, make_engine
from auditor.web.access import COOKIE

DOWN = "postgresql+psycopg://postgres@127.0.0.1:1/auditor"
TOKEN = "t" * 32
KEY = KEY_SCHEME + "a" * 40  # well-formed, so the key is looked up in the database


@pytest.fixture
def client() -> Iterator[TestClient]:
    # The server starts: the schema check cannot read the database and lets it pass (a
    # database that is down now may be up for the next request).
    app = build_app(Settings(database_url=DOWN, broker_url="redis://127.0.0.1:1/0",
                             dashboard_token=TOKEN))  # fmt: skip
    yield TestClient(app, raise_server_exceptions=False)
    app.state.engine.dispose()


def test_a_refused_connect_is_a_connection_error() -> None:
    engine = make_engine(DOWN)
    try:
        with pytest.raises(Exception) as caught, engine.connect():
            pass
    finally:
        engine.dispose()
    assert is_connection_error(caught.value)
    assert not is_connection_error(ValueError("connection failed"))  # not a database error


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/v1/projects/p/raters"), ("POST", "/api/v1/projects/p/labels")],
)
def test_the_api_answers_503_unavailable(client: TestClient, method: str, path: str) -> None:
    answer = client.request(method, path, headers={"Authorization": f"Bearer {KEY}"},
                            json={"labels": []})  # fmt: skip
    assert answer.status_code == 503, answer.text
    assert answer.json() == {
        "error": {"code": "unavailable", "message": "database unavailable", "details": []}
    }
    assert int(answer.headers["Retry-After"]) > 0


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/", {"Cookie": f"{COOKIE}=some-session"}),  # the session is looked up
        ("/projects/p", {"Authorization": f"Bearer {TOKEN}"}),
        ("/projects/p/raters/a", {"Authorization": f"Bearer {TOKEN}"}),
    ],
)
def test_a_dashboard_page_answers_an_html_503_page(
    client: TestClient, path: str, headers: dict[str, str]
) -> None:
    answer = client.get(path, headers=headers)
    assert answer.status_code == 503
    assert answer.headers["content-type"].startswith("text/html")
    assert "<title>Database unavailable" in answer.text
    assert int(answer.headers["Retry-After"]) > 0


def test_every_door_of_the_unit_of_work_raises_the_typed_error() -> None:
    """The driver's error leaves storage once, as ``DatabaseUnavailable`` (the driver's error
    its cause): a transaction, the project lock, the columnar load, the outbox claim and the
    staging connection. The shells map that type and nothing else."""
    from datetime import UTC, datetime

    from auditor.errors import DatabaseUnavailable
    from auditor.storage.unit_of_work import UnitOfWork

    engine = make_engine(DOWN)
    uow = UnitOfWork(engine)
    now = datetime.now(UTC)

    def transaction() -> None:
        with uow:
            uow.projects.by_id(1)

    def lock() -> None:
        with uow.project_lock(1):
            pass

    def staging() -> None:
        with uow.staging():
            pass

    doors = {
        "transaction": transaction,
        "lock": lock,
        "load": lambda: uow.load_labels(1),
        "columns": lambda: uow.label_columns(1),
        "claim": lambda: uow.claim_outbox(now, now, "w", 1),
        "staging": staging,
    }
    try:
        for name, door in doors.items():
            with pytest.raises(DatabaseUnavailable) as caught:
                door()
            cause = caught.value.__cause__
            assert cause is not None and is_connection_error(cause), name
    finally:
        engine.dispose()
