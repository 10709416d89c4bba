"""``auditor serve`` as a real process on loopback: the embedded recompute timer runs in the
app's lifespan and stops cleanly, and the body cap answers 413 before parsing, with and
without Content-Length, through uvicorn."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from auditor.services.access.keys import create_key
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import CATEGORIES, label_rows, serving
from tests.timing import scaled

pytestmark = pytest.mark.e2e
CAP = 4096


@pytest.fixture
def served(database_url: str) -> Iterator[tuple[str, dict[str, str], subprocess.Popen]]:
    engine = make_engine(database_url)
    create_project(UnitOfWork(engine), "served", CATEGORIES)
    ingest_labels(UnitOfWork(engine), "served", label_rows("s", ["r1", "r2", "r3"], 10))
    key = create_key(UnitOfWork(engine), "served", "admin")[1]
    engine.dispose()
    env = {"AUDITOR_SCAN_INTERVAL_SECONDS": "0.3", "AUDITOR_API_MAX_BODY_BYTES": str(CAP)}
    with serving(database_url, **env) as (base, process):
        yield base, {"Authorization": f"Bearer {key}"}, process


def test_embedded_timer_recomputes_and_stops_cleanly(served) -> None:
    base, auth, process = served
    deadline = time.monotonic() + scaled(30)  # 30 s on a quiet machine
    while True:
        latest = httpx.get(f"{base}/api/v1/projects/served/snapshots/latest", headers=auth)
        if latest.status_code == 200:
            break
        assert latest.status_code == 404, latest.text
        assert time.monotonic() < deadline, "the embedded timer wrote no snapshot in 30 s"
        time.sleep(0.2)
    assert latest.json()["n_labels"] == 36
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=20)
    output = Path(process.log_path).read_text()
    # Recent uvicorn re-raises the signal after a graceful shutdown: -SIGTERM is a clean exit.
    assert process.returncode in (0, -signal.SIGTERM), output
    assert "embedded mode" in output and "Application shutdown complete" in output


def test_body_cap_before_parsing_with_and_without_content_length(served) -> None:
    base, auth, _ = served
    url = f"{base}/api/v1/projects/served/labels"
    counts = httpx.get(f"{base}/api/v1/projects/served", headers=auth).json()["counts"]
    row = b'{"item": "big", "rater": "r1", "label": "normal"},'
    body = (
        b'{"labels": ['
        + row * (2 * CAP // len(row))
        + b'{"item": "x", "rater": "r1", "label": "normal"}]}'
    )
    headers = {**auth, "content-type": "application/json"}

    declared = httpx.post(url, content=body, headers=headers)
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == "payload_too_large"
    assert declared.json()["error"]["details"][0]["max"] == CAP  # a client cuts to size

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(body), 512):
            yield body[start : start + 512]

    chunked = httpx.post(url, content=chunks(), headers=headers)
    assert chunked.status_code == 413
    assert chunked.json()["error"]["code"] == "payload_too_large"
    # Under the cap the same kind of request is accepted.
    small_body = b'{"labels": [' + row * 20 + b'{"item": "x", "rater": "r1", "label": "normal"}]}'
    assert len(small_body) < CAP
    small = httpx.post(url, content=small_body, headers=headers)
    assert small.status_code == 200, small.text
    after = httpx.get(f"{base}/api/v1/projects/served", headers=auth).json()["counts"]
    assert after["labels"] == counts["labels"] + 21  # only the small batch
