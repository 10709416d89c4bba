"""docs/api.md's access table and status claims, checked against the server (issue 27: the
docs said 403 where the server answered 401).

Every row of the role table is read from the document: for each route and role, a role
without a tick must get 403 and a role with one must get past the role check (any status
but 401 and 403: 404 for an unknown id, 422 for an empty body are fine). Then the stated
statuses: no key and an unknown key 401 with ``WWW-Authenticate: Bearer``; another project's
slug 404.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.api.conftest import World

DOC = Path(__file__).resolve().parents[3] / "docs" / "api.md"
ROLES = ("ingest", "read", "admin")
METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


def _table() -> list[tuple[str, str, set[str]]]:
    """(method, path under the project, roles allowed) for each route of the table."""
    text = DOC.read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if not line.startswith("| `") or "only" in line:
            continue
        # a route cell may hold an escaped pipe ("enable\|disable"): rejoin it
        joined = line.replace("\\|", "\x00")
        cells = [c.strip().replace("\x00", "|") for c in joined.strip().strip("|").split("|")]
        routes, ticks = cells[0], cells[1:4]
        allowed = {role for role, tick in zip(ROLES, ticks, strict=False) if "✓" in tick}
        for chunk in re.findall(r"`([^`]+)`", routes):
            words = chunk.replace(",", " , ").split()
            methods = [w for w in words if w in METHODS]
            rest = " ".join(w for w in words if w not in METHODS).strip(" ,")
            for path in (p.strip() for p in rest.split(",")):
                if not path or "*" in path:
                    continue
                for variant in _variants(path):
                    rows.extend((method, variant, allowed) for method in methods)
    return rows


def _variants(path: str) -> list[str]:
    """``rules/{rule}/enable|disable`` -> both routes; placeholders get an unknown id."""
    found = re.match(r"^(.*/)([a-z-]+)\|([a-z-]+)$", path)
    paths = [found[1] + found[2], found[1] + found[3]] if found else [path]
    return [re.sub(r"\{[a-z]+\}", "999999", p) for p in paths]


ROWS = _table()


def test_the_table_was_read() -> None:
    assert len(ROWS) > 30
    assert ("POST", "imports/999999/revert", {"admin"}) in ROWS
    assert ("GET", "settings", {"read", "admin"}) in ROWS


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_every_role_gets_what_the_table_says(world: World) -> None:
    wrong = []
    for method, path, allowed in ROWS:
        url = "/api/v1/projects/alpha" + (f"/{path}" if path else "")
        for role in ROLES:
            response = world.client.request(method, url, headers=world.auth("alpha", role), json={})
            refused = response.status_code == 403
            if refused == (role in allowed) or response.status_code == 401:
                wrong.append(f"{method} {path} as {role}: {response.status_code}")
    assert wrong == []


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_stated_statuses(world: World) -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "No key, or an unknown or revoked one: **401**" in text
    for headers in ({}, {"Authorization": "Bearer aud_not-a-key"}):
        response = world.client.get("/api/v1/projects/alpha/raters", headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "gets **404**, exactly like an unknown slug" in text
    other = world.client.get("/api/v1/projects/beta/raters", headers=world.auth("alpha", "read"))
    assert other.status_code == 404
    assert "no key or an unknown one is 401" in text
    assert world.client.get("/api/v1/key").status_code == 401


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_bare_list_body_says_to_send_an_object(world: World) -> None:
    """issue 27: a bare list got "Input should be a valid dictionary"."""
    response = world.client.post(
        "/api/v1/projects/alpha/labels",
        headers=world.auth("alpha", "ingest"),
        json=[{"item": "i", "rater": "r", "label": "normal"}],
    )
    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert message.startswith("the body must be a JSON object, got a JSON array")
    assert '{"labels": [...]}' in message
