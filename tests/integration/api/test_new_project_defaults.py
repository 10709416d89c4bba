"""Issue 21 item 7, the API: a new project gets the default rules unless the body opts out."""

from __future__ import annotations

from typing import Any

from tests.integration.api.conftest import OPERATOR_TOKEN


def test_api_project_create_installs_the_defaults_unless_told_not_to(world) -> None:
    operator = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    for slug, flag, expected in (("api-watched", None, True), ("api-bare", False, False)):
        body: dict[str, Any] = {"slug": slug, "categories": ["a", "b"]}
        if flag is not None:
            body["default_rules"] = flag
        created = world.client.post("/api/v1/projects", json=body, headers=operator)
        assert created.status_code == 201, created.text
        key = created.json()["admin_key"]["key"]
        rules = world.client.get(
            f"/api/v1/projects/{slug}/alerts/rules", headers={"Authorization": f"Bearer {key}"}
        )
        assert rules.status_code == 200, rules.text
        assert bool(rules.json()["rules"]) is expected
