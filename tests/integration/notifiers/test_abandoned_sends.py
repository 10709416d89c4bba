"""Issue 26 item 3: a send past its deadline closes its connection and ends its thread.

A receiver (another process, so its sockets are not counted here) reads each request, then
answers one byte every 0.2 s (inside every per-operation timeout: only the total deadline can
end the send), for minutes. 20 webhook deliveries with a 0.5 s deadline each: afterwards this
process has as many sockets and threads as before. Before the fix every abandoned send kept
its thread and its connection until the receiver stopped."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from auditor.notifiers.kinds import kind_named
from auditor.services.alerts.delivery import send_within
from tests.integration.notifiers.conftest import make_notification

DELIVERIES = 20
DEADLINE = 0.5
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)

SMTP_TRICKLER = r"""
import socket, threading, time
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
def greet(connection):
    with connection:
        for byte in b"220-a greeting that never ends\r\n" * 500:
            time.sleep(0.2)
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                return
while True:
    connection, _ = server.accept()
    threading.Thread(target=greet, args=(connection,), daemon=True).start()
"""

TRICKLER = r"""
import socket, sys, threading, time
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
def answer(connection):
    with connection:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return
            data += chunk
        for byte in b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n" * 50:
            time.sleep(0.2)
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                return
while True:
    connection, _ = server.accept()
    threading.Thread(target=answer, args=(connection,), daemon=True).start()
"""


def _serve(code: str) -> Iterator[int]:
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def trickler_port() -> Iterator[int]:
    yield from _serve(TRICKLER)


@pytest.fixture
def smtp_trickler_port() -> Iterator[int]:
    yield from _serve(SMTP_TRICKLER)


def _sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                count += 1
        except OSError:
            pass  # closed while listing
    return count


def _settle(expected_threads: int, expected_sockets: int, within: float) -> tuple[int, int]:
    """Threads and sockets once they are back to the expected numbers, or after ``within``."""
    end = time.monotonic() + within
    while True:
        now = threading.active_count(), _sockets()
        if now <= (expected_threads, expected_sockets) or time.monotonic() > end:
            return now
        time.sleep(0.05)


def test_abandoned_sends_leave_no_thread_and_no_socket(trickler_port: int) -> None:
    kind = kind_named("webhook")
    config = kind.validate(
        "slow",
        {"url": f"http://127.0.0.1:{trickler_port}/hook", "secret": "s" * 32},
        LOOPBACK,
    )
    notification = make_notification()
    threads, sockets = threading.active_count(), _sockets()
    started = time.monotonic()
    for _ in range(DELIVERIES):
        result = send_within(
            lambda: kind.deliver(notification, config, DEADLINE, channel="slow", allowed=LOOPBACK),
            DEADLINE,
        )
        assert not result.ok and "deadline" in result.reason, result.reason
    took = time.monotonic() - started
    # Each send is cut at its deadline (a little slack for a loaded machine).
    assert took < DELIVERIES * (DEADLINE + 1.0), took
    # Well before the trickled answer could end (50 x 46 bytes x 0.2 s), everything is gone.
    after = _settle(threads, sockets, within=3.0)
    assert after == (threads, sockets), f"before {(threads, sockets)}, after {after}"


def test_abandoned_smtp_sends_leave_no_thread_and_no_socket(smtp_trickler_port: int) -> None:
    # The same for e-mail: a server trickling its greeting is cut off at the deadline.
    kind = kind_named("email")
    settings = {"email_host": "127.0.0.1", "email_port": smtp_trickler_port,
                "email_from": "a@example.org", "email_to": ["b@example.org"]}  # fmt: skip
    config = kind.validate("mail", settings, LOOPBACK)
    notification = make_notification()
    threads, sockets = threading.active_count(), _sockets()
    for _ in range(DELIVERIES):
        result = send_within(
            lambda: kind.deliver(notification, config, DEADLINE, channel="mail", allowed=LOOPBACK),
            DEADLINE,
        )
        assert not result.ok, result.reason
    after = _settle(threads, sockets, within=3.0)
    assert after == (threads, sockets), f"before {(threads, sockets)}, after {after}"
