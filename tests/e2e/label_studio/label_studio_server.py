"""A real Label Studio on loopback, and a small client of its API for the end-to-end test.

Label Studio is installed from PyPI into a virtual environment of its own (``.ci/run`` does it:
its Django stack would not sit beside ours); ``AUDITOR_LABEL_STUDIO`` names its
``label-studio`` executable. Started with a fresh data directory and the settings that let it
call a webhook on loopback (``USE_DEFAULT_BANNED_SUBNETS=false``) and nothing beyond it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.services import IN_CI

EXECUTABLE_ENV = "AUDITOR_LABEL_STUDIO"
# A data directory initialised once (Label Studio's migrations on a new database take two
# minutes on this machine; a copy of a migrated one starts in seconds). .ci/run keeps it
# beside Label Studio's venv; unset, every run starts from nothing.
TEMPLATE_ENV = "AUDITOR_LABEL_STUDIO_TEMPLATE"
VERSION = "1.23.2"
ADMIN = "admin@example.com"
PASSWORD = "auditor-e2e-password"
ADMIN_TOKEN = "e2e0" * 10  # a legacy token set at start (40 characters)
START_TIMEOUT = 300.0  # the first start runs Label Studio's migrations on a new database


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def executable() -> Path:
    """The ``label-studio`` executable; skips the test on a laptop without it, fails in CI."""
    found = os.environ.get(EXECUTABLE_ENV, "")
    if found and Path(found).is_file():
        return Path(found)
    message = (
        f"Label Studio {VERSION} is not installed ({EXECUTABLE_ENV}={found!r}); "
        ".ci/run installs it into its own venv and sets it"
    )
    if IN_CI:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@dataclass
class LabelStudio:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    admin: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.admin = client(self.url, ADMIN_TOKEN)

    def signup(self, email: str) -> httpx.Client:
        """A new annotator through the sign-up form (the API cannot set a password), and a
        client with her own token."""
        with httpx.Client(base_url=self.url, timeout=30, follow_redirects=False) as browser:
            browser.get("/user/signup/")
            csrf = browser.cookies["csrftoken"]
            answer = browser.post(
                "/user/signup/",
                data={"csrfmiddlewaretoken": csrf, "email": email, "password": PASSWORD},
                headers={"Referer": f"{self.url}/user/signup/"},
            )
            assert answer.status_code == 302, answer.text[:500]
            token = browser.get("/api/current-user/token").json()["token"]
        return client(self.url, token)


def client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Token {token}"}, timeout=60.0)


def ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, f"{response.request.url}: {response.text[:500]}"
    return response.json() if response.content else None


def _environment(data_dir: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AUDITOR_", "DJANGO"))},
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        # a webhook on loopback (the default refuses private and loopback addresses)
        "USE_DEFAULT_BANNED_SUBNETS": "false",
        # nothing beyond loopback
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
    }


def _credentials() -> list[str]:
    return [
        "--username", ADMIN, "--password", PASSWORD, "--user-token", ADMIN_TOKEN,
        "--enable-legacy-api-token",
    ]  # fmt: skip


def _from_template(exe: Path, data_dir: Path) -> None:
    """Fill ``data_dir`` from the migrated template, making the template first if needed."""
    template = os.environ.get(TEMPLATE_ENV)
    if not template:
        return
    path = Path(template)
    if not (path / "label_studio.sqlite3").is_file():
        building = path.with_name(f"{path.name}.{os.getpid()}.building")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        subprocess.run(
            [str(exe), "init", "--data-dir", str(building), *_credentials()],
            cwd=building, env=_environment(building), capture_output=True, check=True,
            timeout=START_TIMEOUT,
        )  # fmt: skip
        with contextlib.suppress(OSError):  # another run made it first: keep theirs
            building.rename(path)
        shutil.rmtree(building, ignore_errors=True)
    shutil.copytree(path, data_dir, dirs_exist_ok=True)


@contextlib.contextmanager
def running(data_dir: Path) -> Iterator[LabelStudio]:
    exe = executable()
    _from_template(exe, data_dir)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = _environment(data_dir)
    command = [
        str(exe), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
        "--host", url, "--data-dir", str(data_dir), *_credentials(), "--log-level", "WARNING",
    ]  # fmt: skip
    log = data_dir / "label-studio.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, cwd=data_dir, env=env, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"Label Studio did not start:\n{log.read_text(errors='replace')[-3000:]}"
                )
            time.sleep(0.5)
        yield LabelStudio(url, process, log)
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
