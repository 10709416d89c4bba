"""Auth, projects, labels, snapshots and history through the HTTP API."""

from __future__ import annotations

from sqlalchemy import text

from auditor.storage.db import make_engine
from tests.integration.api.conftest import OPERATOR_TOKEN


def _error(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    return body["error"]


def test_no_key_bad_key_and_revoked_key_are_401(world) -> None:
    client = world.client
    assert _error(client.get("/api/v1/projects/alpha"))["code"] == "unauthorized"
    bad = client.get("/api/v1/projects/alpha", headers={"Authorization": "Bearer aud_nope"})
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == "Bearer"
    ok = client.get("/api/v1/projects/alpha", headers=world.auth("alpha", "read"))
    assert ok.status_code == 200 and ok.json()["categories"] == ["normal", "benign", "malignant"]

    from auditor.services.access.keys import list_keys, revoke_key
    from auditor.storage.unit_of_work import UnitOfWork

    engine = make_engine(world.engine_url)
    try:
        read_key = next(k for k in list_keys(UnitOfWork(engine), "alpha") if k.role == "read")
        assert read_key.last_used_at is not None  # the request above recorded its use
        assert revoke_key(UnitOfWork(engine), "alpha", read_key.id) is True
    finally:
        engine.dispose()
    again = client.get("/api/v1/projects/alpha", headers=world.auth("alpha", "read"))
    assert again.status_code == 401


def test_keys_are_stored_hashed(world) -> None:
    engine = make_engine(world.engine_url)
    try:
        with engine.connect() as connection:
            stored = connection.execute(text("SELECT prefix, key_hash FROM api_keys")).all()
    finally:
        engine.dispose()
    secrets = set(world.keys.values())
    assert len(stored) == len(secrets)
    for prefix, key_hash in stored:
        assert key_hash not in secrets and len(key_hash) == 64
        assert any(secret.startswith(prefix) for secret in secrets)


def test_another_projects_slug_is_404_like_an_unknown_one(world) -> None:
    client = world.client
    other = client.get("/api/v1/projects/beta", headers=world.auth())
    unknown = client.get("/api/v1/projects/nothing-here", headers=world.auth())
    assert other.status_code == unknown.status_code == 404
    assert _error(other)["message"] == "no project 'beta'"


def test_roles(world) -> None:
    client = world.client
    body = {"labels": [{"item": "x", "rater": "a1", "label": "normal"}]}
    url = "/api/v1/projects/alpha"
    # ingest: post labels, read the project and its vocabulary, nothing else
    assert client.post(f"{url}/labels", json=body, headers=world.auth(role="ingest")).is_success
    assert client.get(f"{url}/categories", headers=world.auth(role="ingest")).is_success
    denied = client.get(f"{url}/raters", headers=world.auth(role="ingest"))
    assert denied.status_code == 403 and _error(denied)["code"] == "forbidden"
    # read: every read, no write
    assert client.get(f"{url}/raters", headers=world.auth(role="read")).is_success
    assert (
        client.post(f"{url}/labels", json=body, headers=world.auth(role="read")).status_code == 403
    )
    new = {"names": ["other"]}
    assert (
        client.post(f"{url}/categories", json=new, headers=world.auth(role="read")).status_code
        == 403
    )
    # admin: everything in its project
    added = client.post(f"{url}/categories", json=new, headers=world.auth())
    assert added.json()["categories"][-1] == "other"


def test_project_creation_needs_the_operator_token(world) -> None:
    client = world.client
    body = {"slug": "gamma", "categories": ["yes", "no"]}
    assert client.post("/api/v1/projects", json=body).status_code == 401
    as_admin = client.post("/api/v1/projects", json=body, headers=world.auth())
    assert as_admin.status_code == 401  # a project key is not the operator token
    created = client.post(
        "/api/v1/projects", json=body, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    )
    assert created.status_code == 201, created.text
    key = created.json()["admin_key"]["key"]
    mine = client.get("/api/v1/projects/gamma", headers={"Authorization": f"Bearer {key}"})
    assert mine.json()["slug"] == "gamma"
    twice = client.post(
        "/api/v1/projects", json=body, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    )
    assert twice.status_code == 409 and _error(twice)["code"] == "conflict"


def test_labels_outside_the_vocabulary_are_422_naming_the_row(world) -> None:
    labels = [
        {"item": "i1", "rater": "a1", "label": "normal"},
        {"item": "i2", "rater": "a1", "label": "cancer"},
        {"item": "i3", "rater": "a2", "label": "benign", "labeled_at": "yesterday"},
    ]
    before = world.client.get("/api/v1/projects/alpha", headers=world.auth()).json()["counts"]
    response = world.client.post(
        "/api/v1/projects/alpha/labels", json={"labels": labels}, headers=world.auth()
    )
    assert response.status_code == 422
    error = _error(response)
    assert error["code"] == "labels_rejected"
    where = {(d["row"], d["field"]) for d in error["details"]}
    assert where == {(2, "label"), (3, "labeled_at")}
    assert "cancer" in error["details"][0]["message"]
    after = world.client.get("/api/v1/projects/alpha", headers=world.auth()).json()["counts"]
    assert after == before  # nothing written


def test_schema_errors_name_the_row_too(world) -> None:
    labels = [{"item": "i1", "rater": "a1", "label": "normal"}, {"item": "i2", "rater": "a1"}]
    response = world.client.post(
        "/api/v1/projects/alpha/labels", json={"labels": labels}, headers=world.auth()
    )
    details = _error(response)["details"]
    assert response.status_code == 422
    assert details[0]["row"] == 2 and details[0]["field"] == "label"


def test_single_label_and_bulk(world) -> None:
    url = "/api/v1/projects/alpha"
    one = world.client.post(
        f"{url}/label", json={"item": "z", "rater": "a9", "label": "benign"}, headers=world.auth()
    )
    assert one.status_code == 200 and one.json()["inserted"] == 1
    labels = [
        {"item": f"n{i}", "rater": "a9", "label": "normal", "key": f"k{i}"} for i in range(50)
    ]
    first = world.client.post(f"{url}/labels", json={"labels": labels}, headers=world.auth())
    assert first.json()["inserted"] == 50
    again = world.client.post(f"{url}/labels", json={"labels": labels}, headers=world.auth())
    # A repeat is an import of its own (recorded, nothing inserted), its id opaque too.
    assert again.json() == {
        **first.json(),
        "inserted": 0,
        "duplicates": 50,
        "import_id": again.json()["import_id"],
    }
    assert again.json()["import_id"] != first.json()["import_id"]


def test_snapshots_history_and_rater_report(world) -> None:
    client, url = world.client, "/api/v1/projects/alpha"
    listing = client.get(f"{url}/snapshots", headers=world.auth(role="read")).json()
    assert {s["scope"] for s in listing["snapshots"]} >= {"cumulative"}
    latest = client.get(f"{url}/snapshots/latest", headers=world.auth(role="read")).json()
    assert latest["snapshot"]["project"] == "alpha"
    one = client.get(f"{url}/snapshots/{latest['snapshot']['id']}", headers=world.auth())
    assert one.json() == latest
    history = client.get(
        f"{url}/history", params={"metric": "kappa_s"}, headers=world.auth(role="read")
    ).json()
    assert (
        history["points"]
        and history["points"][0]["value"] == latest["measures"]["kappa_s"]["value"]
    )
    report = client.get(f"{url}/raters/a1/report", headers=world.auth(role="read"))
    assert report.status_code == 200, report.text
    body = report.json()
    assert body["self_agreement"] == latest["raters"]["a1"]["self_agreement"]
    assert {row["rater"] for row in body["pairwise_cohen"]} == {"a2", "a3"}
    assert body["history"]["self_agreement"][0]["value"] == body["self_agreement"]["value"]


def test_router_errors_use_the_one_shape(world) -> None:
    missing = world.client.get("/api/v1/nothing")
    assert missing.status_code == 404 and _error(missing)["code"] == "not_found"
    wrong = world.client.delete("/api/v1/projects/alpha/labels", headers=world.auth())
    assert wrong.status_code == 405 and _error(wrong)["code"] == "method_not_allowed"
    bad = world.client.get("/api/v1/projects/alpha/history", headers=world.auth())
    assert bad.status_code == 422 and _error(bad)["details"][0]["location"] == ["query", "metric"]


def test_history_names_what_the_project_reports_instead_of_an_empty_answer(world) -> None:
    client, url, auth = world.client, "/api/v1/projects/alpha/history", world.auth(role="read")
    bogus = client.get(url, params={"metric": "bogus"}, headers=auth)
    assert bogus.status_code == 404, bogus.text
    assert "no 'bogus'" in _error(bogus)["message"] and "kappa_s" in _error(bogus)["message"]
    scope = client.get(url, params={"metric": "kappa_s", "scope": "9d"}, headers=auth)
    assert scope.status_code == 404 and "no scope '9d'" in _error(scope)["message"], scope.text
    # A pair is one subject whichever rater is named first.
    forward = client.get(
        url, params={"metric": "cohen_kappa", "subject": "pair:a1|a2"}, headers=auth
    )
    backward = client.get(
        url, params={"metric": "cohen_kappa", "subject": "pair:a2|a1"}, headers=auth
    )
    assert forward.status_code == 200 and forward.json()["points"], forward.text
    assert backward.json()["points"] == forward.json()["points"]
    # A known series over an empty range is simply empty.
    empty = client.get(
        url, params={"metric": "kappa_s", "until": "2000-01-01T00:00:00Z"}, headers=auth
    )
    assert empty.status_code == 200 and empty.json()["points"] == []
