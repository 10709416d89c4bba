"""``auditor serve`` as a real process on loopback: the embedded recompute timer runs in the
app's lifespan and stops cleanly, and the body cap answers 413 before parsing, with and
without Content-Length, through uvicorn."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from auditor.services.ingest import ingest_labels
from auditor.services.keys import create_key
from auditor.services.projects import create_project
from auditor.storage.db import make_engine
from auditor.storage.unit_of_work import UnitOfWork
from tests.integration.api.conftest import CATEGORIES, label_rows

pytestmark = pytest.mark.e2e
CAP = 4096


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(database_url: str) -> Iterator[tuple[str, dict[str, str], subprocess.Popen]]:
    engine = make_engine(database_url)
    create_project(UnitOfWork(engine), "served", CATEGORIES)
    ingest_labels(UnitOfWork(engine), "served", label_rows("s", ["r1", "r2", "r3"], 10))
    key = create_key(UnitOfWork(engine), "served", "admin")[1]
    engine.dispose()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
    env |= {
        "AUDITOR_DATABASE_URL": database_url,
        "AUDITOR_SCAN_INTERVAL_SECONDS": "0.3",
        "AUDITOR_API_MAX_BODY_BYTES": str(CAP),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "serve",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {process.communicate()[0]}")
            time.sleep(0.1)
        yield base, {"Authorization": f"Bearer {key}"}, process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_embedded_timer_recomputes_and_stops_cleanly(served) -> None:
    base, auth, process = served
    deadline = time.monotonic() + 30
    while True:
        latest = httpx.get(f"{base}/api/v1/projects/served/snapshots/latest", headers=auth)
        if latest.status_code == 200:
            break
        assert latest.status_code == 404, latest.text
        assert time.monotonic() < deadline, "the embedded timer wrote no snapshot in 30 s"
        time.sleep(0.2)
    assert latest.json()["n_labels"] == 36
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=20)
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
