"""The committed docs/openapi.json is what the app serves (regenerate with
``python -m auditor.api.openapi > docs/openapi.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from auditor.api.openapi import render

COMMITTED = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"


def test_served_document_matches_the_committed_one(world) -> None:
    served = world.client.get("/openapi.json")
    assert served.status_code == 200
    committed = json.loads(COMMITTED.read_text())
    assert served.json() == committed, (
        "docs/openapi.json is stale: python -m auditor.api.openapi > docs/openapi.json"
    )
    assert render() == COMMITTED.read_text()


def test_every_json_route_documents_the_error_shape() -> None:
    document = json.loads(COMMITTED.read_text())
    for path, operations in document["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in operations.items():
            for status in ("401", "404", "422"):
                schema = operation["responses"][status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)
