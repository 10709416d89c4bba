"""Every route that takes a project or an id, walked with project alpha's admin key against
project beta: all answer 404. A route added without an entry here fails the test."""

from __future__ import annotations

import re

from auditor.api.routing import api_routes

# Routes outside any project (checked elsewhere: operator token, liveness, metrics).
UNSCOPED = {
    ("POST", "/api/v1/projects"),
    ("GET", "/api/v1/key"),  # the key's own project and role
    ("GET", "/healthz"),
    ("GET", "/metrics"),
}

# A valid body per route that takes one, so a 404 cannot hide behind a 422.
BODIES = {
    ("POST", "/api/v1/projects/{slug}/labels"): {
        "labels": [{"item": "x", "rater": "a1", "label": "normal"}]
    },
    ("POST", "/api/v1/projects/{slug}/label"): {"item": "x", "rater": "a1", "label": "normal"},
    ("POST", "/api/v1/projects/{slug}/categories"): {"names": ["extra"]},
    ("PATCH", "/api/v1/projects/{slug}/settings"): {"interval_level": 0.9},
    ("POST", "/api/v1/projects/{slug}/alerts/rules"): {
        "metric": "rho",
        "condition": "below",
        "threshold": 0.5,
    },
    ("POST", "/api/v1/projects/{slug}/alerts/defaults"): {"channels": []},
    ("POST", "/api/v1/projects/{slug}/alerts/channels"): {"name": "new-log", "kind": "log"},
    ("PATCH", "/api/v1/projects/{slug}/alerts/channels/{channel}"): {"timeout_seconds": 5},
    ("POST", "/api/v1/projects/{slug}/alerts/silences"): {
        "ends_at": "2099-01-01T00:00:00Z",
        "subject": "project",
    },
    ("POST", "/api/v1/projects/{slug}/integrations/label-studio"): {
        "action": "ANNOTATION_CREATED",
        "annotation": {
            "id": 1,
            "task": 1,
            "completed_by": 1,
            "result": [{"type": "choices", "value": {"choices": ["normal"]}}],
        },
    },
}


def _routes(app) -> list[tuple[str, str, bool]]:
    """(method, path, takes a body) of every JSON route."""
    found = []
    for route in api_routes(app.routes):
        takes_body = route.body_field is not None
        found.extend((method, route.path, takes_body) for method in sorted(route.methods))
    return found


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)


def test_every_route_hides_another_projects_slug_and_ids(world) -> None:
    app = world.client.app
    beta_ids = {
        "rater": "b-rater",
        "item": "b-item",
        "snapshot_id": str(world.opaque("snapshot", "beta", world.beta_snapshot_id)),
        "rule": "beta:b-rule",
        "channel": "b-log",
        "silence_id": str(world.opaque("silence", "beta", world.beta_silence_id)),
        "import_id": str(world.opaque("import", "beta", world.beta_import_id)),
    }
    checked = []
    for method, path, takes_body in _routes(app):
        if (method, path) in UNSCOPED:
            continue
        assert "{slug}" in path, f"{method} {path} is neither project-scoped nor listed"
        params = {"metric": "kappa_s"} if path.endswith("/history") else None
        body = BODIES.get((method, path))
        if takes_body:
            assert body is not None, f"add a valid body for {method} {path} to BODIES"
        # 1. beta's slug with alpha's key: as if beta did not exist.
        url = _fill(path, {"slug": "beta", **beta_ids})
        response = world.client.request(method, url, json=body, params=params, headers=world.auth())
        assert response.status_code == 404, (method, url, response.text)
        assert response.json()["error"]["code"] == "not_found"
        # 2. alpha's slug with beta's ids: not found inside alpha.
        names = set(re.findall(r"\{(\w+)\}", path)) - {"slug"}
        if names:
            url = _fill(path, {"slug": "alpha", **beta_ids})
            response = world.client.request(
                method, url, json=body, params=params, headers=world.auth()
            )
            assert response.status_code == 404, (method, url, response.text)
        checked.append((method, path))
    assert len(checked) >= 33
