"""What the API gives its client (``auditor.client``): the key's own project and role, every
point of a history in pages (``all=true``, the rows ``auditor history`` prints), and the
limit a 413 names, so a batch can be cut to size without reading the message."""

from __future__ import annotations

from datetime import timedelta

from auditor.services.ingest.labels import ingest_labels
from auditor.services.queries.history import metric_history
from auditor.services.recompute.recompute import find_project_id, recompute_project
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import T0, label_rows

URL = "/api/v1/projects/alpha/history"


def test_a_key_names_its_project_and_role(world) -> None:
    for role in ("ingest", "read", "admin"):
        answer = world.client.get("/api/v1/key", headers=world.auth("beta", role))
        assert answer.status_code == 200 and answer.json() == {"project": "beta", "role": role}
    stranger = world.client.get("/api/v1/key", headers={"Authorization": "Bearer aud_nope"})
    assert stranger.status_code == 401 and stranger.headers["www-authenticate"] == "Bearer"
    assert world.client.get("/api/v1/key").status_code == 401


def _more_snapshots(world, rounds: int) -> None:
    engine = make_engine(world.engine_url)
    try:
        project_id = find_project_id(UnitOfWork(engine), "alpha")
        for day in range(1, rounds + 1):
            start = T0 + timedelta(days=2 * day)
            ingest_labels(
                UnitOfWork(engine), "alpha", label_rows(f"r{day}", ["a1", "a2"], 5, start)
            )
            recompute_project(UnitOfWork(engine), project_id, now=start + timedelta(days=1))
    finally:
        engine.dispose()


def _every_point(world, limit: int, **params: str) -> tuple[list[dict], int]:
    points, pages, after = [], 0, None
    while True:
        query = {"metric": "kappa_s", "all": "true", "limit": str(limit), **params}
        answer = world.client.get(URL, params={**query, **({"after": after} if after else {})},
                                  headers=world.auth(role="read"))  # fmt: skip
        assert answer.status_code == 200, answer.text
        body = answer.json()
        points += body["points"]
        pages += 1
        after = body["next_after"]
        if after is None:
            return points, pages


def test_every_point_in_pages_is_what_auditor_history_lists(world) -> None:
    _more_snapshots(world, 3)
    whole, pages = _every_point(world, 10_000)
    one_by_one, many = _every_point(world, 1)
    assert pages == 1 and many == len(whole) + 1 and one_by_one == whole
    engine = make_engine(world.engine_url)
    try:
        listed = metric_history(UnitOfWork(engine), "alpha", "kappa_s")
    finally:
        engine.dispose()
    assert len(whole) == len(listed) >= 8  # four snapshots, cumulative and 7d each
    assert [(p["scope"], p["value"], p["n"]) for p in whole] == [
        (p.scope, p.value, p.n) for p in listed
    ]
    windows, _ = _every_point(world, 3, scope="7d")
    assert windows == [p for p in whole if p["scope"] == "7d"]


def test_a_cursor_must_be_one_the_history_gave(world) -> None:
    auth = world.auth(role="read")
    huge = "9" * 30
    for after in ("nonsense", "1.cumulative.x", "x.cumulative.1", "1..1", f"{huge}.7d.1"):
        bad = world.client.get(URL, params={"metric": "kappa_s", "all": "true", "after": after},
                               headers=auth)  # fmt: skip
        assert bad.status_code == 422, bad.text
        assert bad.json()["error"]["details"][0]["field"] == "after"
    alone = world.client.get(URL, params={"metric": "kappa_s", "after": "1"}, headers=auth)
    assert alone.status_code == 422 and "all=true" in alone.json()["error"]["message"]


def test_a_batch_over_the_limit_names_the_limit(world) -> None:
    world.client.app.state.settings.api_max_batch_labels = 3
    labels = [{"item": f"x{i}", "rater": "a1", "label": "normal"} for i in range(4)]
    answer = world.client.post("/api/v1/projects/alpha/labels", json={"labels": labels},
                               headers=world.auth())  # fmt: skip
    assert answer.status_code == 413
    error = answer.json()["error"]
    assert error["code"] == "batch_too_large"
    assert error["details"] == [{"field": "labels", "message": error["message"], "max": 3}]


def test_every_raters_repeats(world) -> None:
    url = "/api/v1/projects/alpha/repeats"
    answer = world.client.get(url, headers=world.auth(role="read"))
    assert answer.status_code == 200, answer.text
    rows = {row["rater"]: row for row in answer.json()["raters"]}
    assert set(rows) == {"a1", "a2", "a3"} and rows["a1"]["have"] == 6  # a1's repeated items
    assert world.client.get(url, headers=world.auth(role="ingest")).status_code == 403
