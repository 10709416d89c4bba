"""The key is checked from the headers before anything reads the body: an unauthenticated
request gets 401 whatever its body, and a flood of large unauthenticated bodies does not make
the server buffer them."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.integration.api.conftest import serving

LABELS = "/api/v1/projects/alpha/labels"
NOT_JSON = b'{"labels": [oops'
MB = 1024 * 1024


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer aud_unknown"}, {"Authorization": "Basic dXNlcjpwdw=="}],
    ids=["no key", "unknown key", "other scheme"],
)
def test_unauthenticated_gets_401_whatever_the_body(world, headers) -> None:
    for body in (NOT_JSON, b"", b'{"labels": []}', b"\x00\xff" * 100):
        answer = world.client.post(
            LABELS, content=body, headers={**headers, "content-type": "application/json"}
        )
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == "unauthorized"
        assert answer.headers["www-authenticate"] == "Bearer"
    answer = world.client.post("/api/v1/projects", content=NOT_JSON, headers=headers)
    assert answer.status_code == 401, answer.text


def test_another_projects_key_is_404_before_the_body(world) -> None:
    answer = world.client.post(LABELS, content=NOT_JSON, headers=world.auth("beta", "admin"))
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"


def test_a_valid_key_still_reaches_the_body_checks(world) -> None:
    headers = {**world.auth(), "content-type": "application/json"}
    answer = world.client.post(LABELS, content=NOT_JSON, headers=headers)
    assert answer.status_code in (400, 422), answer.text  # the body is judged, after the key


def _rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.mark.e2e
@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres)])
def test_32_parallel_unauthenticated_10mb_posts_do_not_grow_the_server(database_url) -> None:
    body = b'{"labels": [' + b" " * (10 * MB - 100) + b"]}"  # under the 10 MiB cap
    with serving(database_url) as (base, process):
        process: subprocess.Popen

        def post(_: int) -> int:
            with httpx.Client(timeout=60) as client:
                return client.post(base + LABELS, content=body).status_code

        assert post(0) == 401  # warm up the code path once
        before = _rss_kib(process.pid, "VmRSS")
        with ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(post, range(32)))
        peak = _rss_kib(process.pid, "VmHWM")  # the high-water mark covers the whole flood
        assert statuses == [401] * 32
        growth_mb = (peak - before) / 1024
        print(f"server RSS before {before / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB")
        assert growth_mb < 50, f"the server grew by {growth_mb:.0f} MiB"
