"""Real loopback receivers (HTTP, SMTP) and a spy on every outgoing socket connection."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from auditor.notifiers import Notification
from auditor.notifiers.targets import resolving_with
from tests.listener import Listener, listening
from tests.resolvers import hosts_only


@pytest.fixture(autouse=True)
def _no_dns() -> Iterator[None]:
    """Channel checks resolve with this machine's names only: no test sends a DNS query
    (issue 26; a test that needs another name passes a resolver of its own)."""
    with resolving_with(hosts_only):
        yield


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1. ``script`` lists the answers, the last one repeats.

    An answer is a status code, or (status, extra headers), or ("sleep", seconds).
    """

    script: list = field(default_factory=lambda: [200])
    received: list[Received] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            receiver.received.append(Received(self.path, dict(self.headers.items()), body))
            index = min(len(receiver.received), len(receiver.script)) - 1
            answer = receiver.script[index]
            if isinstance(answer, tuple) and answer[0] == "sleep":
                threading.Event().wait(answer[1])
                answer = 200
            status, extra = answer if isinstance(answer, tuple) else (answer, {})
            try:
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"no" if status >= 300 else b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender gave up (timeout test): that is the point

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

    return Handler


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def connections(monkeypatch) -> list[tuple]:
    """Every address a socket in this process tries to connect to during the test."""
    seen: list[tuple] = []
    original = socket.socket.connect

    def spy(self: socket.socket, address: object) -> None:
        seen.append(address if isinstance(address, tuple) else (address,))
        return original(self, address)

    monkeypatch.setattr(socket.socket, "connect", spy)
    return seen


def make_notification(**changes: object) -> Notification:
    fields: dict[str, object] = {
        "event_id": "0f" * 16,
        "kind": "firing",
        "sequence": 0,
        "project": "p1",
        "rule_id": "p1:default:rho",
        "severity": "warning",
        "condition": "not_confidently_above",
        "subject": "project",
        "metric": "rho",
        "scope": "cumulative",
        "value": 0.71,
        "ci_low": 0.61,
        "ci_high": 0.8,
        "n": 120,
        "judged_value": 0.61,
        "threshold": 0.667,
        "reason": "ci_low 0.61 < 0.667",
        "note": "",
        "episode_started_at": datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
        "occurred_at": datetime(2026, 3, 2, 9, 0, 5, tzinfo=UTC),
        "snapshot_id": 42,
    }
    fields.update(changes)
    return Notification(**fields)  # type: ignore[arg-type]


@pytest.fixture
def smtp_listener() -> Iterator[Listener]:
    """A TCP listener on loopback standing in for an SMTP server; counts connections."""
    with listening() as state:
        yield state
