"""Input hygiene on a real server over PostgreSQL: a NUL in any string parameter of any route
(path, query or JSON body) is 422 naming the parameter, never 500, and no 4xx closes the
keep-alive connection; repeated JSON keys are 400.

The routes are walked from the app itself (the OpenAPI document for bodies), so a route added
later is covered without editing this test.
"""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pytest

from auditor.api import create_app
from auditor.api.routing import api_routes
from auditor.web import install_dashboard
from tests.integration.api.conftest import OPERATOR_TOKEN, make_settings, seed, serving

NUL = "a\x00b"
POSTGRES = [pytest.param("postgres", marks=pytest.mark.postgres)]


def _app_routes() -> list[Any]:
    app = create_app(make_settings("sqlite://"))
    install_dashboard(app, token="")
    return app, api_routes(app.routes)


def _query_names(dependant: Any) -> list[str]:
    names = [param.alias for param in dependant.query_params]
    for inner in dependant.dependencies:
        names += [name for name in _query_names(inner) if name not in names]
    return names


def _resolve(schema: dict, components: dict) -> dict:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _string_fields(schema: dict, components: dict) -> Iterator[tuple[dict, list]]:
    """(a body with a NUL in one string field, that field's location) for each string field
    of an object body, through unions; an array of objects gets one element."""
    schema = _resolve(schema, components)
    for variant in schema.get("oneOf", []) + schema.get("anyOf", []):
        yield from _string_fields(variant, components)
    const = {
        name: prop["const"]
        for name, prop in schema.get("properties", {}).items()
        if "const" in prop
    }  # a discriminator must be right for the body to reach the variant's fields
    for name, prop in schema.get("properties", {}).items():
        prop = _resolve(prop, components)
        kinds = {p.get("type") for p in [prop, *prop.get("anyOf", [])]}
        items = _resolve(prop.get("items", {}), components) if "array" in kinds else {}
        if "string" in kinds and name not in const:
            yield {**const, name: NUL}, ["body", name]
        if items.get("type") == "string":
            yield {**const, name: [NUL]}, ["body", name, "0"]
        for inner, where in _string_fields(items, components) if items.get("properties") else ():
            yield {**const, name: [inner]}, ["body", name, "0", *where[1:]]


def _cases() -> list[tuple[str, str, str, dict | None, list]]:
    app, routes = _app_routes()
    spec = app.openapi()
    components = spec["components"]["schemas"]
    cases = []
    for route in routes:
        names = re.findall(r"{(\w+)}", route.path)
        values = {name: "alpha" if name == "slug" else "x" for name in names}
        for method in sorted(route.methods - {"HEAD"}):
            for name in names:
                bad = {**values, name: NUL}
                path = route.path.format(**{k: quote(v, safe="") for k, v in bad.items()})
                cases.append((method, path, "", None, ["path", name]))
            path = route.path.format(**values)
            for name in _query_names(route.dependant):
                cases.append((method, path, urlencode({name: NUL}), None, ["query", name]))
            operation = spec["paths"].get(route.path, {}).get(method.lower(), {})
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                for payload, where in _string_fields(body["schema"], components):
                    cases.append((method, path, "", payload, where))
    return cases


# The bodies that reached PostgreSQL before, complete and otherwise valid.
_EMAIL = {"kind": "email", "name": "m", "email_host": "mail.example.com", "email_to": ["o@x.org"]}
WHOLE_BODIES = [
    ("/api/v1/projects/alpha/alerts/silences", {"ends_at": "2099-01-01T00:00:00Z"}, "reason"),
    ("/api/v1/projects/alpha/alerts/silences", {"ends_at": "2099-01-01T00:00:00Z"}, "rule"),
    ("/api/v1/projects/alpha/alerts/channels", {**_EMAIL, "email_from": "a@x.org"}, "email_host"),
    ("/api/v1/projects/alpha/alerts/channels", _EMAIL, "email_from"),
    ("/api/v1/projects", {"slug": "nul", "categories": ["a", "b"]}, "name"),
]
CASES = _cases() + [
    ("POST", path, "", {**body, field: NUL}, ["body", field]) for path, body, field in WHOLE_BODIES
]


def test_the_walk_covers_every_route_kind() -> None:
    kinds = {(where[0], where[1]) for *_, where in CASES}
    for expected in [("path", "slug"), ("path", "item"), ("path", "rater"), ("path", "channel"),
                     ("query", "after"), ("query", "rater"), ("query", "metric"),
                     ("body", "reason"), ("body", "rule"), ("body", "email_from"),
                     ("body", "email_host"), ("body", "name"), ("body", "labels")]:  # fmt: skip
        assert expected in kinds, expected
    assert len(CASES) > 80


@pytest.mark.parametrize("backend", POSTGRES)
def test_a_nul_anywhere_is_422_naming_it_and_keeps_the_connection(database_url) -> None:
    keys, _ = seed(database_url)
    with serving(database_url, AUDITOR_ADMIN_TOKEN=OPERATOR_TOKEN) as (base, _process):
        netloc = urlsplit(base).netloc
        connection = http.client.HTTPConnection(netloc, timeout=30)
        failures = []
        for method, path, query, payload, where in CASES:
            token = OPERATOR_TOKEN if path == "/api/v1/projects" else keys[("alpha", "admin")]
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            body = None if payload is None else json.dumps(payload)
            url = path + (f"?{query}" if query else "")
            connection.request(method, url, body=body, headers=headers)
            response = connection.getresponse()
            answer = response.read()
            named = []
            if answer.startswith(b"{"):
                details = json.loads(answer)["error"]["details"]
                named = [d.get("location") for d in details]
            if response.status != 422 or where not in named or response.will_close:
                failures.append((method, url, payload, response.status, answer[:200]))
        connection.close()
    assert failures == [], failures[:5]


@pytest.mark.parametrize("backend", POSTGRES)
def test_repeated_keys_are_400_and_keep_the_connection(database_url) -> None:
    keys, _ = seed(database_url)
    with serving(database_url) as (base, _process):
        connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=30)
        headers = {
            "Authorization": f"Bearer {keys[('alpha', 'admin')]}",
            "Content-Type": "application/json",
        }
        silence = '{"ends_at": "2099-01-01T00:00:00Z", "reason": "a", "reason": "b"}'
        label = '{"labels": [{"item": "i", "rater": "r", "label": "normal", "rater": "s"}]}'
        for path, body in (("alerts/silences", silence), ("labels", label)):
            connection.request("POST", f"/api/v1/projects/alpha/{path}", body, headers)
            response = connection.getresponse()
            error = json.loads(response.read())["error"]
            assert response.status == 400 and "repeats the key" in error["message"], error
            assert not response.will_close
        connection.request("GET", "/api/v1/projects/alpha/alerts/silences", headers=headers)
        silences = json.loads(connection.getresponse().read())["silences"]
        assert all(s["reason"] != "b" for s in silences)  # nothing was written
        connection.close()


@pytest.mark.parametrize("backend", POSTGRES)
def test_no_4xx_closes_the_connection(database_url) -> None:
    keys, _ = seed(database_url)
    env = {"AUDITOR_API_MAX_BODY_BYTES": "4096"}
    with serving(database_url, **env) as (base, _process):
        connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=30)
        admin = {"Authorization": f"Bearer {keys[('alpha', 'admin')]}"}
        json_type = {"Content-Type": "application/json"}
        big = b'{"labels": [' + b" " * 8192 + b"]}"
        cases = [
            ("POST", "/api/v1/projects/alpha/labels", big, json_type, 401),  # before the body
            ("POST", "/api/v1/projects/alpha/labels", big, {**admin, **json_type}, 413),
            ("POST", "/api/v1/projects/alpha/labels", b"{oops", {**admin, **json_type}, 422),
            ("GET", "/api/v1/projects/beta", None, admin, 404),
            ("DELETE", "/api/v1/projects/alpha/labels", None, admin, 405),
            ("GET", "/api/v1/projects/alpha", None, admin, 200),  # the same connection still
        ]
        for method, path, body, headers, status in cases:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            assert response.status == status, (method, path, response.status)
            assert not response.will_close, (method, path, status)
        connection.close()
