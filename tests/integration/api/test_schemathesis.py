"""Schemathesis against the OpenAPI document of a real server (uvicorn on loopback, seeded
SQLite database): every operation, every check, bounded examples, zero failures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.api.conftest import OPERATOR_TOKEN, seed, serving

pytestmark = pytest.mark.e2e
MAX_EXAMPLES = 25


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the contract does not depend on the backend; keep the run short


CONFIG = """
headers = {{ Authorization = "Bearer {key}" }}

[parameters]
"path.slug" = "alpha"

[[operations]]
include-path-regex = "^/api/v1/projects$"
headers = {{ Authorization = "Bearer {operator}" }}

# Whether a label is in the vocabulary depends on the project's data, which a schema cannot
# say: a schema-valid label may be refused (422 naming the row). Every other check applies.
# So with Label Studio's events (their annotations become labels).
[[operations]]
include-path-regex = "/(labels?|integrations/label-studio)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", 401, 403, 404, 422]

# Alerts: a webhook host must resolve to a public address, a rule's channels and a silence's
# rule must exist, names must be free, a silence must end after it starts. None of it is
# expressible in a schema; the services answer 404/409/422 naming the field.
[[operations]]
include-path-regex = "/alerts/(rules|channels|silences|defaults)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", 401, 403, 404, 409, 422]

# A channel's settings (config) are checked by its kind's plugin, which a schema of a generic
# object cannot say; a channel in use cannot be deleted (409).
[[operations]]
include-path-regex = "/alerts/channels/[^/]+$"
checks.positive_data_acceptance.expected-statuses = ["2xx", 401, 403, 404, 409, 422]

# Times (at, since, until) must lie in [1970-01-01, 2100-01-01) UTC once their offset is
# applied; JSON Schema's date-time format cannot say so, and a year-based pattern would still
# miss the offsets at the edges. Such a time is 422 naming the parameter.
[[operations]]
include-path-regex = "/(history|snapshots/latest|alerts/history/[a-z]+)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", 401, 403, 404, 422]

# The slug is pinned above, so a case generated with a bad slug is sent with "alpha"; the
# check then re-reads the path values as strings, finds the integer silence_id "1" invalid
# and calls the case negative. When id 1 is alpha's seeded silence, ending it is a correct
# 204. (A truly bad silence_id never reaches the route: FastAPI answers 422.)
[[operations]]
include-path-regex = "/alerts/silences/[^/]+/end$"
checks.negative_data_rejection.expected-statuses = [
    204, 400, 401, 403, 404, 405, 406, 409, 415, 422, 428, 429
]

# The same pinned-slug effect for an import id (1 is alpha's seeded import: 200); a revert
# of an import already reverted is 409.
[[operations]]
include-path-regex = "/imports/[^/]+(/revert)?$"
checks.negative_data_rejection.expected-statuses = [
    200, 400, 401, 403, 404, 405, 406, 409, 415, 422, 428, 429
]
checks.positive_data_acceptance.expected-statuses = ["2xx", 401, 403, 404, 409]
"""


def test_api_conforms_to_its_schema(database_url: str, tmp_path: Path) -> None:
    keys, _ = seed(database_url)
    config = tmp_path / "schemathesis.toml"
    # Requests address the seeded project (a random slug would stop at 404).
    config.write_text(CONFIG.format(key=keys[("alpha", "admin")], operator=OPERATOR_TOKEN))
    env = {"AUDITOR_BROKER_URL": "redis://unused:1/0", "AUDITOR_ADMIN_TOKEN": OPERATOR_TOKEN}
    with serving(database_url, **env) as (base, _):
        command = [
            str(Path(sys.executable).with_name("st")),
            "--config-file", str(config),
            "run", f"{base}/openapi.json",
            "--checks", "all",
            "--phases", "examples,coverage,fuzzing",
            "--max-examples", str(MAX_EXAMPLES),
            "--seed", "6",
        ]  # fmt: skip
        run = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    assert "Tested: 44" in run.stdout, run.stdout[-3000:]
