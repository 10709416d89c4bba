"""Print the OpenAPI document: ``python -m auditor.api.openapi > docs/openapi.json``.

The committed docs/openapi.json must equal what the app serves at /openapi.json (a test
checks); the document does not depend on settings or the database.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from auditor.api.app import create_app
from auditor.config import Settings


def document() -> dict[str, Any]:
    return create_app(Settings(database_url="sqlite://")).openapi()


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
